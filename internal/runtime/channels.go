package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channel"
	"github.com/clawsec/claw/internal/channel/bridge"
	"github.com/clawsec/claw/internal/channel/discord"
	"github.com/clawsec/claw/internal/channel/planckclaw"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/serve"
)

// startedChannel is a channel claw serve runs, with its runtime.
type startedChannel struct {
	name string
	ch   channel.Channel
	rt   *Agent
	// where is where the channel listens, once it does.
	where func() string

	cancel context.CancelFunc // ends its Run
	done   chan struct{}      // closed once Run returned
}

// channelSet is the channels claw serve runs. A reload replaces them all:
// the new ones are built first (a section that fails keeps the old ones),
// then the old ones stop (the bridge's clients reconnect and say hello
// again) and the new ones start.
type channelSet struct {
	// Setup is the command line's setup for each channel's runtime; its
	// Env loads the config now in force.
	Setup func() Setup
	Queue *approvals.Queue
	Log   *slog.Logger
	// Warn and Info print a warning about a section, and where a channel
	// listens.
	Warn, Info func(format string, args ...any)
	// Estop engages the emergency stop for a Discord approver; nil means
	// they cannot.
	Estop func(ctx context.Context, by string) error

	ctx     context.Context // the daemon's, once started
	failed  context.CancelCauseFunc
	mu      sync.Mutex
	chs     []*startedChannel
	retired []*startedChannel // stopped, their runtimes closed at exit
}

func (s *channelSet) list() []*startedChannel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.chs)
}

// open builds the channels of the config now in force.
func (s *channelSet) open(ctx context.Context) ([]*startedChannel, error) {
	setup := s.Setup()
	e, err := setup.Env()
	if err != nil {
		return nil, err
	}
	return s.openChannels(ctx, setup, e)
}

// start runs chs under ctx; the first that fails calls failed.
func (s *channelSet) start(ctx context.Context, failed context.CancelCauseFunc, chs []*startedChannel) {
	s.mu.Lock()
	s.ctx, s.failed, s.chs = ctx, failed, chs
	s.mu.Unlock()
	for _, c := range chs {
		cctx, cancel := context.WithCancel(ctx)
		c.cancel, c.done = cancel, make(chan struct{})
		go func() {
			defer close(c.done)
			if err := c.ch.Run(cctx); err != nil {
				failed(fmt.Errorf("channel %s: %w", c.name, err))
			}
		}()
		go func() { s.Info("channel %s on %s", c.name, c.where()) }()
	}
}

// stop ends the channels' Runs and waits for them.
func stopChannels(chs []*startedChannel) {
	for _, c := range chs {
		if c.cancel != nil {
			c.cancel()
			<-c.done
		}
	}
}

// reload replaces the channels with those of the config now in force.
func (s *channelSet) reload(ctx context.Context) error {
	next, err := s.open(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	old := s.chs
	s.retired = append(s.retired, old...)
	runCtx, failed := s.ctx, s.failed
	s.mu.Unlock()
	stopChannels(old)
	s.start(runCtx, failed, next)
	return nil
}

// close stops every channel and closes every runtime, retired ones too.
func (s *channelSet) close() {
	s.mu.Lock()
	chs, retired := s.chs, s.retired
	s.mu.Unlock()
	stopChannels(chs)
	closeChannels(append(retired, chs...))
}

// deliver sends a message to a session of the running channel of that
// name, if it takes messages.
func (s *channelSet) deliver(ctx context.Context, to, session string, m channel.Message) error {
	for _, c := range s.list() {
		if r, ok := c.ch.(channel.Receiver); ok && c.name == to {
			return r.Deliver(ctx, session, m)
		}
	}
	return fmt.Errorf("%w: %q is not running or takes no messages", channel.ErrNoSuchChannel, to)
}

// channelBuilder makes a channel from its Env and section; approver is
// the approver its broker was built with, estop what its approvers may
// engage the emergency stop with (nil: nothing).
type channelBuilder func(env *channel.Env, sec config.Channel, approver broker.Approver, estop func(context.Context, string) error) (channel.Channel, func() string, error)

// channelBuilders make the channels claw serve starts from their config
// sections.
var channelBuilders = map[string]channelBuilder{
	config.ChannelDiscord: openDiscord,
	config.ChannelBridge: func(env *channel.Env, sec config.Channel, _ broker.Approver, _ func(context.Context, string) error) (channel.Channel, func() string, error) {
		tok := os.Getenv(sec.TokenEnv)
		if tok == "" {
			return nil, nil, WithCode(ExitError, fmt.Errorf("[channels.bridge] token_env %s is not set", sec.TokenEnv),
				"export "+sec.TokenEnv+" with the token the bridge's clients send in hello (16 characters or more)")
		}
		s, err := bridge.New(env, bridge.Config{Listen: sec.Listen, Token: tok, Sessions: sec.Sessions, Buffer: sec.Buffer})
		if err != nil {
			return nil, nil, WithCode(ExitError, fmt.Errorf("[channels.bridge]: %w", err), "export "+sec.TokenEnv+" with a longer token")
		}
		return s, func() string {
			select {
			case <-s.Ready():
				return "ws://" + s.Addr().String() + "/bridge"
			case <-time.After(5 * time.Second):
				return "(not listening)"
			}
		}, nil
	},
	config.ChannelPlanckClaw: func(env *channel.Env, sec config.Channel, _ broker.Approver, _ func(context.Context, string) error) (channel.Channel, func() string, error) {
		s, err := planckclaw.New(env, planckclaw.Config{Dir: sec.Dir})
		if err != nil {
			return nil, nil, WithCode(ExitError, fmt.Errorf("[channels.planckclaw]: %w", err),
				"dir must be a directory of yours (made 0700) holding only FIFOs of yours (0600), no symlinks")
		}
		return s, func() string { return sec.Dir }, nil
	},
}

// channelApprovers make the approver of a channel that asks its approvers
// on its own wire (Discord's codes) instead of only through the queue.
var channelApprovers = map[string]func() broker.Approver{
	config.ChannelDiscord: func() broker.Approver { return &discord.LateApprover{} },
}

// openChannels builds every channel whose section the config has, each
// with a runtime of its own (its broker records its name, autonomy and
// tools_allow) that asks its approvers through the daemon's queue.
func (s *channelSet) openChannels(ctx context.Context, setup Setup, e *Env) ([]*startedChannel, error) {
	queue, log := s.Queue, s.Log
	var out []*startedChannel
	fail := func(err error) ([]*startedChannel, error) {
		closeChannels(out)
		return nil, err
	}
	estopFile := filepath.Join(e.Home, "ESTOP")
	// the approvers of channels that ask on their own wire, made first:
	// a bridge session's source may be one of them
	own := map[string]broker.Approver{}
	for name, mk := range channelApprovers {
		if _, ok := e.Config.Channels[name]; ok {
			own[name] = mk()
		}
	}
	for _, name := range []string{config.ChannelBridge, config.ChannelPlanckClaw, config.ChannelDiscord} {
		sec, ok := e.Config.Channels[name]
		build := channelBuilders[name]
		if !ok || build == nil {
			continue
		}
		approvers := approverNames(name, sec.ApproverIDs)
		var approver broker.Approver
		switch {
		case own[name] != nil:
			approver = own[name]
		case len(approvers) > 0:
			approver = queue.For(name, approvers)
		}
		if len(sec.Sources) > 0 {
			approver = sourceApprover{name: name, sources: sec.Sources, own: own, rest: approver}
		}
		if len(approvers) == 0 && !everySessionSourced(sec) {
			s.Warn("[channels.%s] has no approver_ids: what needs approval on it will not run", name)
		}
		if name == config.ChannelBridge && len(sec.Sessions) == 0 {
			s.Warn("[channels.bridge] lists no sessions: every hello will be refused")
		}
		rt, err := NewAgent(ctx, setup, name, approver, func(ro *AgentOptions) { ro.Log = log })
		if err != nil {
			return fail(err)
		}
		env := &channel.Env{
			Name: name, Broker: rt.Broker, Tools: rt.Agent.Tools(), Autonomy: rt.Autonomy,
			Queue: queue, Approvers: approvers, Chat: channelChat(rt.Agent),
			Estop: func() bool { _, err := os.Lstat(estopFile); return !errors.Is(err, fs.ErrNotExist) },
			Log:   log, Deliver: s.deliver,
		}
		ch, where, err := build(env, sec, approver, s.Estop)
		if err != nil {
			rt.Close()
			return fail(err)
		}
		out = append(out, &startedChannel{name: name, ch: ch, rt: rt, where: where})
	}
	return out, nil
}

// everySessionSourced reports whether a bridge section asks every
// session's approvals in a source channel, so approver_ids is not needed.
func everySessionSourced(sec config.Channel) bool {
	for _, s := range sec.Sessions {
		if _, ok := sec.Sources[s]; !ok {
			return false
		}
	}
	return len(sec.Sessions) > 0
}

// sourceAsker is a channel's approver that can ask for another channel's
// user in a place of its own (Discord: a channel id).
type sourceAsker interface {
	AskIn(ctx context.Context, place, requester string, r broker.Request) (broker.Answer, error)
}

// sourceApprover asks the approvals of a session that has a source
// ("discord:CHANNEL_ID", [channels.bridge] sources) in that channel, and
// the others through rest.
type sourceApprover struct {
	name    string
	sources map[string]string
	own     map[string]broker.Approver
	rest    broker.Approver
}

func (a sourceApprover) Approve(ctx context.Context, r broker.Request) (broker.Answer, error) {
	none := broker.Answer{Result: approvals.StatusTimeout, By: "none"}
	user := broker.UserFrom(ctx)
	src, ok := a.sources[user]
	if !ok {
		if a.rest == nil {
			return none, fmt.Errorf("%w: nobody may approve for %s", approvals.ErrNotAllowed, a.name)
		}
		return a.rest.Approve(ctx, r)
	}
	to, place, _ := strings.Cut(src, ":")
	asker, ok := a.own[to].(sourceAsker)
	if !ok {
		return none, fmt.Errorf("%w: the source %s of session %s is not running", channel.ErrNoSuchChannel, src, user)
	}
	return asker.AskIn(ctx, place, a.name+":"+user, r)
}

// approverNames are the approver names a channel's approver_ids stand for
// in the queue and the receipts: Discord's bare user ids as
// "discord:ID", the others as they are written ("cli:alice").
func approverNames(channelName string, ids []string) []string {
	if channelName != config.ChannelDiscord {
		return ids
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, "discord:"+id)
	}
	return out
}

func closeChannels(chs []*startedChannel) {
	for _, c := range chs {
		c.rt.Close()
	}
}

// channelChat runs turns of a channel's agent, one conversation per key
// and one turn at a time per key, their tool calls receipted under the
// user.
func channelChat(ag *agent.Agent) channel.ChatFunc {
	type conv struct {
		mu sync.Mutex // held for a turn
		id string     // the memory's conversation id, once there is one
	}
	var mu sync.Mutex
	convs := map[string]*conv{}
	return func(ctx context.Context, user, key, text string) (string, error) {
		mu.Lock()
		c, ok := convs[key]
		if !ok {
			c = &conv{}
			convs[key] = c
		}
		mu.Unlock()
		c.mu.Lock()
		defer c.mu.Unlock()
		res, err := ag.Turn(broker.WithUser(ctx, user), agent.TurnRequest{Conversation: c.id, NewConversation: c.id == "", Message: text})
		if err != nil {
			return "", err
		}
		c.id = res.Conversation
		return res.Reply, nil
	}
}

// status lists the channels for GET /status.
func (s *channelSet) status() []serve.ChannelInfo {
	var out []serve.ChannelInfo
	for _, c := range s.list() {
		out = append(out, serve.ChannelInfo{Name: c.name, Autonomy: c.rt.Autonomy, Address: c.where()})
	}
	return out
}

// serveDeliver is POST /channels/{name}/messages.
func (s *channelSet) serveDeliver() func(ctx context.Context, to string, m serve.ChannelMessage) error {
	return func(ctx context.Context, to string, m serve.ChannelMessage) error {
		err := s.deliver(ctx, to, m.Session, channel.Message{RequestID: m.RequestID, Content: m.Content, Meta: m.Meta})
		if errors.Is(err, channel.ErrNoSuchChannel) || errors.Is(err, bridge.ErrUnknownSession) {
			return fmt.Errorf("%w: %v", serve.ErrNotFound, err)
		}
		return err
	}
}
