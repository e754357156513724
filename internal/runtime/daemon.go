package runtime

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/internal/serve"
	"github.com/clawsec/claw/policies"
	"github.com/clawsec/claw/receipts"
)

// Hooks is the daemon's answerer of agent hook calls: Load reads its
// config and returns what puts it in force; Answer answers one call.
type Hooks struct {
	Load   func(ctx context.Context) (swap func(), err error)
	Answer func(ctx context.Context, r serve.HookRequest) (serve.HookAnswer, error)
}

// GateTests is the daemon's answerer of `claw gate test` dry runs: Load
// compiles the policies in force and returns what puts them in force;
// Answer decides one dry run, writing no receipt.
type GateTests struct {
	Load   func(ctx context.Context) (swap func(), err error)
	Answer func(ctx context.Context, r serve.GateTestRequest) (serve.HookAnswer, error)
}

// Daemon is what claw serve is given by the command line.
type Daemon struct {
	Env *Env
	// Setup is the setup of every runtime the daemon opens, at start and
	// at each reload; its Env loads the config now in force.
	Setup func() Setup
	// Socket and Listen replace [serve] socket and listen when not "".
	Socket, Listen string
	// Signer loads the key of the daemon's own receipts (estop,
	// policy_loaded, the final checkpoint).
	Signer func() (*receipts.Signer, error)
	// QuietEnv loads the config now in force, without notes, for the
	// answerers of hook calls and of gate-test dry runs.
	QuietEnv func() (*Env, error)
	// GateTestDecide decides a dry run as claw gate test does.
	GateTestDecide GateTestDecide
	// Estop engages the emergency stop for a Discord approver.
	Estop func(ctx context.Context, by string) error
	// LogTo receives the daemon's log; Warn and Info print its notes.
	LogTo      io.Writer
	Warn, Info func(format string, args ...any)
}

// Serve runs claw serve until ctx ends: the HTTP API with its approvals
// queue, the channels of the config, autonomous runs, the agent hooks and
// the reload of all of them.
func Serve(ctx context.Context, d Daemon) error {
	log := logx.FromEnv(d.LogTo)
	e := d.Env
	sc := e.Config.Serve
	socket, listen := sc.Socket, sc.Listen
	if d.Socket != "" {
		socket = d.Socket
	}
	if d.Listen != "" {
		listen = d.Listen
	}
	if listen != "" {
		if err := serve.CheckLoopback(listen); err != nil {
			return WithCode(ExitUsage, err, "claw serve only listens on this machine: use 127.0.0.1:PORT, or the unix socket")
		}
	}
	token, err := serve.LoadToken(sc.TokenFile)
	if err != nil {
		return WithCode(ExitError, err, "run 'claw init' to create the token file, or 'chmod 600 "+sc.TokenFile+"'")
	}

	queue := approvals.NewQueue(e.Config.Security.ApprovalTimeout.Duration)
	// The server, and so its metrics, exists once the runtime does.
	var metrics atomic.Pointer[serve.Metrics]
	open := func(ctx context.Context) (*Agent, error) {
		return NewAgent(ctx, d.Setup(), "serve", queue, func(ro *AgentOptions) {
			ro.Log = log
			ro.AutonomousAgent = true
			ro.Prestart = true
			ro.OnDecision = func(lat time.Duration) {
				if m := metrics.Load(); m != nil {
					m.ObserveDecision(lat)
				}
			}
		})
	}
	rt, err := open(ctx)
	if err != nil {
		return err
	}
	holder := &runtimeHolder{cur: &runtimeRef{rt: rt}}
	defer holder.close()
	chans := &channelSet{
		Setup: d.Setup, Queue: queue, Log: log, Warn: d.Warn, Info: d.Info, Estop: d.Estop,
	}
	first, err := chans.open(ctx)
	if err != nil {
		return err
	}
	defer chans.close()

	// The daemon's own receipt writer: estop, policy_loaded and the final
	// checkpoint. The log takes one writer at a time across handles.
	signer, err := d.Signer()
	if err != nil {
		return err
	}
	rdir := e.Config.Receipts.Dir
	rlog, err := broker.OpenLog(rdir, signer, broker.LogOptions{CheckpointInterval: -1, CheckpointEvery: e.Config.Receipts.Checkpoint})
	if err != nil {
		return WithCode(ExitError, fmt.Errorf("opening the receipt log: %w", err))
	}
	defer rlog.Close()
	if _, err := rlog.PolicyLoaded(ctx, receipts.Policy{Digest: rt.Broker.PolicyDigest(), Source: "serve:start"}); err != nil {
		return WithCode(ExitError, fmt.Errorf("writing the policy_loaded receipt: %w", err))
	}
	hooks := hookService(d.QuietEnv, rlog)
	swapHooks, err := hooks.Load(ctx)
	if err != nil {
		return err
	}
	swapHooks()
	gates := gateTestService(d.QuietEnv, d.GateTestDecide)
	swapGates, err := gates.Load(ctx)
	if err != nil {
		return err
	}
	swapGates()
	pub := signer.PublicKey()
	check := executor.Check()

	srv, err := serve.New(serve.Config{
		Home:              e.Home,
		Socket:            socket,
		Listen:            listen,
		Token:             token,
		MaxBodyBytes:      int64(sc.MaxBodyBytes),
		ReadHeaderTimeout: sc.ReadHeaderTimeout.Duration,
		RequestTimeout:    sc.RequestTimeout.Duration,
		Queue:             queue,
		Log:               rlog,
		Logger:            log,
		Deliver:           chans.serveDeliver(),
		Hook:              hooks.Answer,
		GateTest:          gates.Answer,
		Chat: func(ctx context.Context, r serve.ChatRequest, onDelta func(string)) (serve.ChatResult, error) {
			ref := holder.acquire()
			defer ref.wg.Done()
			res, err := ref.rt.Agent.Turn(ctx, agent.TurnRequest{Conversation: r.Conversation, NewConversation: r.NewConversation,
				Message: r.Message, OnDelta: onDelta})
			if err != nil {
				return serve.ChatResult{}, chatErr(err)
			}
			return serve.ChatResult{Conversation: res.Conversation, NewConversation: res.Started, Reply: res.Reply, ToolCalls: serveToolCalls(res.ToolCalls)}, nil
		},
		Autonomous: func(ctx context.Context, r serve.AutoRequest) serve.AutoResult {
			ref := holder.acquire()
			defer ref.wg.Done()
			return serveAutonomous(ctx, ref.rt, r)
		},
		Resolve: func(ctx context.Context, id string) (string, error) {
			ref := holder.acquire()
			defer ref.wg.Done()
			c, _, err := ref.rt.Memory.Get(ctx, id)
			if errors.Is(err, memory.ErrNotFound) {
				return "", fmt.Errorf("%w: %v", serve.ErrNotFound, err)
			}
			return c.ID, err
		},
		Tools: func() []serve.Tool {
			ref := holder.acquire()
			defer ref.wg.Done()
			var out []serve.Tool
			for _, t := range ref.rt.Agent.Tools() {
				out = append(out, serve.Tool{Name: string(t.Name), Description: t.Description})
			}
			return out
		},
		Search: func(ctx context.Context, q string, limit int) (any, error) {
			ref := holder.acquire()
			defer ref.wg.Done()
			hits, err := ref.rt.Memory.Search(ctx, q, limit)
			if hits == nil {
				hits = []memory.Hit{}
			}
			return hits, err
		},
		Info: func() serve.Info {
			ref := holder.acquire()
			defer ref.wg.Done()
			return serve.Info{Autonomy: ref.rt.Autonomy, PolicyDigest: ref.rt.Broker.PolicyDigest(), Workspace: ref.rt.Work, Channels: chans.status(),
				Sandbox: map[string]any{"landlock_abi": check.LandlockABI, "seccomp": check.Seccomp, "usable": check.Require(e.Config.Sandbox.MinLandlockABI) == nil}}
		},
		Reload: func(ctx context.Context) (string, error) {
			if err := regoTestsPass(ctx, d.Setup()); err != nil {
				return "", err
			}
			next, err := open(ctx)
			if err != nil {
				return "", err
			}
			swapHooks, err := hooks.Load(ctx)
			if err != nil {
				next.Close()
				return "", err
			}
			swapGates, err := gates.Load(ctx)
			if err != nil {
				next.Close()
				return "", err
			}
			if err := chans.reload(ctx); err != nil {
				next.Close()
				return "", err
			}
			swapHooks()
			swapGates()
			holder.swap(next)
			return next.Broker.PolicyDigest(), nil
		},
		ReloadOnSIGHUP: true,
		OnReload: func(digest string, err error) {
			if err != nil {
				d.Warn("reload failed, the previous policies stay in force: %v", err)
			} else {
				d.Info("policies reloaded: %s", digest)
			}
		},
		VerifyChain: func(ctx context.Context) (bool, error) {
			rep, err := audit.Verify(ctx, rdir, audit.Options{Keys: []crypto.PublicKey{pub}, Fast: true})
			if err != nil {
				return false, err
			}
			return rep.Verified, nil
		},
	})
	if err != nil {
		return WithCode(ExitError, err)
	}
	metrics.Store(srv.Metrics())

	// The pid file (next to the socket) lets scripts and service managers
	// signal the daemon.
	pidFile := filepath.Join(filepath.Dir(socket), "claw.pid")
	defer os.Remove(pidFile)
	go func() {
		<-srv.Ready()
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
			d.Warn("could not write %s: %v", pidFile, err)
		}
		d.Info("serving on %s", socket)
		if listen != "" {
			d.Info("serving on http://%s", listen)
		}
	}()
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	chans.start(sctx, stop, first)
	err = srv.Serve(sctx)
	stop(nil)
	chans.close()
	if err != nil {
		return WithCode(ExitError, err)
	}
	if cause := context.Cause(sctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return WithCode(ExitError, cause)
	}
	d.Info("stopped")
	return nil
}

// serveToolCalls is what a turn's tool calls did, for the daemon's API.
func serveToolCalls(calls []agent.ToolRecord) []serve.ToolCall {
	out := []serve.ToolCall{}
	for _, c := range calls {
		out = append(out, serve.ToolCall{ID: c.ID, Name: c.Name, Status: c.Status, Error: c.Error, ActionID: c.ActionID})
	}
	return out
}

// serveAutonomous is an autonomous run of the daemon (POST /autonomous):
// bounded by [autonomous] (max_turns only lowered by the request), stopped
// by the emergency stop however it is engaged, its actions waiting in the
// approvals queue when the policy asks.
func serveAutonomous(ctx context.Context, rt *Agent, r serve.AutoRequest) serve.AutoResult {
	c := rt.AutonomousBounds(func() bool { return r.Estopped() || rt.Broker.Estopped() })
	limit := c.MaxTurns
	if limit <= 0 {
		limit = agent.DefaultMaxTurns
	}
	if r.MaxTurns > 0 {
		c.MaxTurns = min(r.MaxTurns, limit)
	}
	res := rt.Autonomous.RunAutonomous(ctx, c, agent.RunRequest{
		Run: r.Run, Conversation: r.Conversation, NewConversation: r.NewConversation, Task: r.Task, User: r.User,
		OnTurn: func(t agent.RunTurn) {
			turn := serve.AutoTurn{N: t.N, Next: t.Next.String(), Conversation: t.Result.Conversation, ToolCalls: serveToolCalls(t.Result.ToolCalls)}
			if t.Err != nil {
				turn.Error = rt.Redact(t.Err.Error())
			}
			r.OnTurn(turn)
		},
	})
	return serve.AutoResult{Conversation: res.Conversation, Turns: res.Turns, ToolCalls: res.ToolCalls, State: res.State, Stop: res.Stop}
}

// runtimeRef counts the turns running on one runtime, so a reload can
// close the old runtime once they are done.
type runtimeRef struct {
	rt *Agent
	wg sync.WaitGroup
}

type runtimeHolder struct {
	mu  sync.Mutex
	cur *runtimeRef
}

func (h *runtimeHolder) acquire() *runtimeRef {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.cur
	r.wg.Add(1)
	return r
}

func (h *runtimeHolder) swap(rt *Agent) {
	h.mu.Lock()
	old := h.cur
	h.cur = &runtimeRef{rt: rt}
	h.mu.Unlock()
	go func() { old.wg.Wait(); old.rt.Close() }()
}

func (h *runtimeHolder) close() {
	h.mu.Lock()
	r := h.cur
	h.mu.Unlock()
	r.wg.Wait()
	r.rt.Close()
}

// chatErr marks errors of the model provider for the daemon's metrics
// and status codes.
func chatErr(err error) error {
	var se *provider.StatusError
	var rl *provider.RateLimitError
	for _, p := range []error{provider.ErrAuth, provider.ErrTimeout, provider.ErrBadResponse, provider.ErrBadRequest, provider.ErrNetwork, provider.ErrNoKey} {
		if errors.Is(err, p) {
			return &serve.ProviderError{Err: err}
		}
	}
	if errors.As(err, &se) || errors.As(err, &rl) {
		return &serve.ProviderError{Err: err}
	}
	if errors.Is(err, agent.ErrEmptyMessage) {
		return fmt.Errorf("%w: %v", serve.ErrBadRequest, err)
	}
	return err
}

// regoTestsPass runs the Rego unit tests of the built-in and user
// policies; a reload goes ahead only when they pass.
func regoTestsPass(ctx context.Context, s Setup) error {
	e, err := s.Env()
	if err != nil {
		return err
	}
	mods, tests, err := gate.LoadUserPolicies(e.Home + "/policies")
	if err != nil {
		return err
	}
	extra := map[string]string{}
	for n, s := range mods {
		extra["user/"+n] = s
	}
	for n, s := range tests {
		extra["user/"+n] = s
	}
	var out bytes.Buffer
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, failed, err := policies.RunTests(tctx, extra, &out)
	if err != nil {
		return fmt.Errorf("policy tests: %w", err)
	}
	if failed > 0 {
		return fmt.Errorf("%d policy tests failed", failed)
	}
	return nil
}
