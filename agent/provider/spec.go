package provider

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"sync"
	"time"
)

// The kinds of provider a config section can name.
const (
	KindMock      = "mock"
	KindOpenAI    = "openai-compatible"
	KindAnthropic = "anthropic"
	KindReliable  = "reliable"
	KindRouter    = "router"
)

// Spec is one provider as configured: what a [providers.NAME] section of
// the config holds.
type Spec struct {
	Name string
	// Kind is one of the Kind constants; "openai" is accepted for
	// KindOpenAI.
	Kind    string
	BaseURL string
	// APIKeyEnv names the environment variable holding the key. The key
	// is read from there and nowhere else; "" means no key (a local
	// server, or the mock).
	APIKeyEnv string
	Model     string
	// Timeout bounds one Chat call (the mock honours it too, so a
	// scripted delay can stand in for a slow endpoint).
	Timeout time.Duration
	// MaxResponseBytes caps an answer; 0 means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Script is the mock's fixture file; "" means the embedded script.
	Script string
	// Headers are extra request headers (never a key).
	Headers map[string]string
	// Fallbacks (reliable) names the members, tried in order.
	Fallbacks []string
	// Routes (router) maps a route hint to a provider name; Default is
	// the provider for requests without a known hint.
	Routes  map[string]string
	Default string
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// New builds the leaf provider s describes (mock, openai-compatible or
// anthropic), reading its key with getenv (os.Getenv when nil). Composite
// kinds need their members: use [Build]. The provider logs nothing; one
// from [Build] logs its retries to Build's logger.
func New(s Spec, getenv func(string) string) (Provider, error) {
	return newLeaf(s, getenv, nil)
}

func newLeaf(s Spec, getenv func(string) string, log *slog.Logger) (Provider, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if s.Name == "" {
		return nil, fmt.Errorf("provider: a provider needs a name")
	}
	switch s.Kind {
	case KindMock:
		var script *Script
		if s.Script != "" {
			var err error
			if script, err = LoadScript(s.Script); err != nil {
				return nil, fmt.Errorf("provider %q: %w", s.Name, err)
			}
		}
		m := NewMock(s.Name, script)
		m.timeout = s.Timeout
		return m, nil
	case KindOpenAI, "openai", KindAnthropic:
	case KindReliable, KindRouter:
		return nil, fmt.Errorf("provider %q: kind %q is built from other providers (use Build)", s.Name, s.Kind)
	default:
		return nil, fmt.Errorf("provider %q: unknown kind %q (want mock, openai-compatible, anthropic, reliable or router)", s.Name, s.Kind)
	}
	var key string
	if s.APIKeyEnv != "" {
		if !envName().MatchString(s.APIKeyEnv) {
			return nil, fmt.Errorf("provider %q: api_key_env must be the name of an environment variable, not a key", s.Name)
		}
		key = getenv(s.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("provider %q: %w: $%s is empty", s.Name, ErrNoKey, s.APIKeyEnv)
		}
	}
	c := HTTPConfig{Name: s.Name, BaseURL: s.BaseURL, APIKey: key, Model: s.Model, Timeout: s.Timeout, MaxResponseBytes: s.MaxResponseBytes, Headers: s.Headers, Log: log}
	if s.Kind == KindAnthropic {
		return NewAnthropic(c)
	}
	return NewOpenAI(c)
}

// Build builds the provider called name from specs, with the members it
// needs if it is a reliable or a router, and nothing else: a section whose
// key is unset does not stop the others from working. A member must be
// defined in specs; cycles are errors. `claw provider list` can call Build
// for each name to show which ones are usable and why not. log (nil
// discards) receives what the providers log: a reliable's fallbacks, a
// router's unknown hints, and the retries of the HTTP clients.
func Build(specs []Spec, name string, getenv func(string) string, log *slog.Logger) (Provider, error) {
	byName := map[string]Spec{}
	for _, s := range specs {
		if _, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("provider %q: defined twice", s.Name)
		}
		byName[s.Name] = s
	}
	built := map[string]Provider{}
	visiting := map[string]bool{}
	var build func(string) (Provider, error)
	build = func(name string) (Provider, error) {
		if p, ok := built[name]; ok {
			return p, nil
		}
		s, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("provider %q: not defined", name)
		}
		if visiting[name] {
			return nil, fmt.Errorf("provider %q: refers to itself through its members", name)
		}
		visiting[name] = true
		defer delete(visiting, name)
		var p Provider
		var err error
		switch s.Kind {
		case KindReliable:
			var members []Provider
			for _, m := range s.Fallbacks {
				mp, err := build(m)
				if err != nil {
					return nil, fmt.Errorf("provider %q: %w", name, err)
				}
				members = append(members, mp)
			}
			p, err = NewReliable(log, members...)
		case KindRouter:
			def, derr := build(s.Default)
			if derr != nil {
				return nil, fmt.Errorf("provider %q: default: %w", name, derr)
			}
			routes := map[string]Provider{}
			for hint, m := range s.Routes {
				mp, err := build(m)
				if err != nil {
					return nil, fmt.Errorf("provider %q: route %q: %w", name, hint, err)
				}
				routes[hint] = mp
			}
			p, err = NewRouter(log, def, routes)
		default:
			p, err = newLeaf(s, getenv, log)
		}
		if err != nil {
			return nil, err
		}
		built[name] = p
		return p, nil
	}
	return build(name)
}
