package provider

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strings"
)

// The ChatRequest.Metadata keys a [Router] reads, in the order it tries
// them.
const (
	// RouteKey names a route outright ("fast", "local").
	RouteKey = "route"
	// PurposeKey says what the request is for: [PurposeChat],
	// [PurposeSummary] or [PurposeProbe].
	PurposeKey = "purpose"
	// ChannelKey names the channel the conversation came from: "cli",
	// "serve", "mcp".
	ChannelKey = "channel"
)

// The values of Metadata[PurposeKey] that claw sets.
const (
	PurposeChat    = "chat"    // a turn of a conversation
	PurposeSummary = "summary" // compacting older messages into a summary
	PurposeProbe   = "probe"   // the round trip of `claw provider test`
)

// routeKeys are the metadata keys a Router tries, in order.
var routeKeys = [...]string{RouteKey, PurposeKey, ChannelKey}

// Router sends each request to the provider its metadata names. The
// values of Metadata["route"], then "purpose", then "channel" are looked
// up in turn among the route names, and the first that names a route
// wins: with routes {summary: cheap, serve: fast}, compaction goes to
// cheap on every channel, the daemon's chat to fast, and everything else
// to the default provider. A route hint no route names is logged at debug
// level.
type Router struct {
	def    Provider
	routes map[string]Provider
	log    *slog.Logger
}

// NewRouter returns a Router. def must not be nil; routes may be empty.
// A nil logger discards the log.
func NewRouter(log *slog.Logger, def Provider, routes map[string]Provider) (*Router, error) {
	if def == nil {
		return nil, errors.New("router provider: no default provider")
	}
	rs := make(map[string]Provider, len(routes))
	for k, p := range routes {
		if p == nil {
			return nil, errors.New("router provider: route " + k + " has no provider")
		}
		rs[k] = p
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Router{def: def, routes: rs, log: log}, nil
}

// Name implements [Provider]: "router(default;hint=name,…)".
func (r *Router) Name() string {
	keys := make([]string, 0, len(r.routes))
	for k := range r.routes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("router(" + r.def.Name())
	for i, k := range keys {
		if i == 0 {
			b.WriteString(";")
		} else {
			b.WriteString(",")
		}
		b.WriteString(k + "=" + r.routes[k].Name())
	}
	b.WriteString(")")
	return b.String()
}

// Capabilities implements [Provider]: those of the default provider.
func (r *Router) Capabilities() Capabilities { return r.def.Capabilities() }

// Route returns the provider a request goes to.
func (r *Router) Route(req ChatRequest) Provider {
	for _, k := range routeKeys {
		if v := req.Metadata[k]; v != "" {
			if p, ok := r.routes[v]; ok {
				return p
			}
		}
	}
	if hint := req.Metadata[RouteKey]; hint != "" {
		r.log.Debug("unknown route hint, using the default provider", slog.String("route", excerpt(hint)), slog.String("provider", r.def.Name()))
	}
	return r.def
}

// Chat implements [Provider].
func (r *Router) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	p := r.Route(req)
	resp, err := p.Chat(ctx, req)
	if err == nil && resp.Provider == "" {
		resp.Provider = p.Name()
	}
	return resp, err
}
