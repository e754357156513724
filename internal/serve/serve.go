package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/receipts"
)

// ChatRequest is one message to the agent.
type ChatRequest struct {
	Conversation    string
	NewConversation bool
	Message         string
}

// ToolCall is what happened to one tool call of a turn.
type ToolCall struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Status   string `json:"status"`
	Error    string `json:"error,omitempty"`
	ActionID string `json:"action_id,omitempty"`
}

// ChatResult is the answer to a ChatRequest.
type ChatResult struct {
	Conversation string     `json:"conversation"`
	Reply        string     `json:"reply"`
	ToolCalls    []ToolCall `json:"tool_calls"`
	// NewConversation is set when the turn started a conversation.
	NewConversation bool `json:"-"`
}

// ChatFunc runs one turn. onDelta, when not nil, receives the reply as it
// streams.
type ChatFunc func(ctx context.Context, r ChatRequest, onDelta func(string)) (ChatResult, error)

// ProviderError marks a ChatFunc error that came from the model provider
// (counted in claw_provider_errors_total, answered 502).
type ProviderError struct{ Err error }

func (e *ProviderError) Error() string { return e.Err.Error() }
func (e *ProviderError) Unwrap() error { return e.Err }

// Tool describes one tool of the agent.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Info is the static part of GET /status.
type Info struct {
	Autonomy     string `json:"autonomy"`
	PolicyDigest string `json:"policy_digest"`
	Sandbox      any    `json:"sandbox"`
	Workspace    string `json:"workspace,omitempty"`
	// Channels are the channels the daemon runs besides its own API.
	Channels []ChannelInfo `json:"channels,omitempty"`
}

// ChannelInfo is one channel in GET /status.
type ChannelInfo struct {
	Name     string `json:"name"`
	Autonomy string `json:"autonomy"`
	// Address is where the channel listens (a URL, a directory).
	Address string `json:"address"`
}

// Config wires a Server.
type Config struct {
	// Home is the claw home; the ESTOP file lives there.
	Home string
	// Socket is the unix socket path; its directory is made 0700 and the
	// socket 0600.
	Socket string
	// Listen is an optional loopback TCP address ("127.0.0.1:8787").
	Listen string
	// Token is the bearer token (see LoadToken).
	Token string

	MaxBodyBytes      int64
	ReadHeaderTimeout time.Duration
	RequestTimeout    time.Duration
	// ShutdownTimeout bounds how long running requests may finish after
	// the server is told to stop (10 s if zero).
	ShutdownTimeout time.Duration

	// Queue is the approvals queue (required).
	Queue *approvals.Queue
	// Log is the daemon's receipt writer: estop, policy_loaded and the
	// final checkpoint (required).
	Log *broker.Log
	// Chat runs a turn; nil answers /chat with 503.
	Chat ChatFunc
	// Resolve maps a conversation id or unique prefix to the full id, so
	// that turns of one conversation are serialized however it is named.
	// An error wrapping ErrNotFound is answered 404.
	Resolve func(ctx context.Context, id string) (string, error)
	// Tools lists the agent's tools.
	Tools func() []Tool
	// Search searches the memory; nil answers 503.
	Search func(ctx context.Context, q string, limit int) (any, error)
	// Info fills GET /status.
	Info func() Info
	// Reload compiles, tests and swaps in the policies (SIGHUP). It
	// returns the digest now in force.
	Reload func(ctx context.Context) (digest string, err error)
	// ReloadOnSIGHUP makes Serve reload on SIGHUP.
	ReloadOnSIGHUP bool
	// OnReload is told the outcome of every reload.
	OnReload func(digest string, err error)
	// VerifyChain verifies the receipt log for claw_receipt_chain_valid;
	// it runs at most once a minute.
	VerifyChain func(ctx context.Context) (bool, error)
	// Logger receives the daemon's events (discarded if nil).
	Logger *slog.Logger
	// Deliver sends a message to a session of a channel (POST
	// /channels/{name}/messages); nil answers 503. An error wrapping
	// ErrNotFound is answered 404.
	Deliver func(ctx context.Context, channel string, m ChannelMessage) error
	// Hook decides agent hook calls (POST /hook/{format}); nil answers 503
	// and `claw hook` decides in process.
	Hook HookFunc
	// GateTest answers `claw gate test` dry runs (POST /gate/test); nil
	// answers 503 and the command decides in process.
	GateTest GateTestFunc
	// Autonomous runs an autonomous run (POST /autonomous); nil answers
	// 503.
	Autonomous AutoFunc
}

// ChannelMessage is the body of POST /channels/{name}/messages.
type ChannelMessage struct {
	Session   string         `json:"session"`
	RequestID string         `json:"request_id"`
	Content   string         `json:"content"`
	Meta      map[string]any `json:"meta,omitempty"`
}

// Server is the daemon.
type Server struct {
	cfg     Config
	metrics *Metrics
	handler http.Handler
	log     *slog.Logger

	convMu sync.Mutex
	convs  map[string]*convLock

	reloadMu sync.Mutex

	verifyMu   sync.Mutex
	verifiedAt time.Time

	// autonomous runs, by id; runOrder is their start order
	runMu      sync.Mutex
	runs       map[string]*autoRun
	runOrder   []string
	runsClosed bool
	runWG      sync.WaitGroup
	runCtx     context.Context

	ready chan struct{} // closed once listening
	addrs []net.Addr
}

type convLock struct {
	mu   sync.Mutex
	refs int
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Queue == nil || cfg.Log == nil {
		return nil, errors.New("serve: Queue and Log are required")
	}
	if len(cfg.Token) < 16 {
		return nil, errors.New("serve: the bearer token is missing or shorter than 16 characters")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = 5 * time.Second
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 120 * time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Listen != "" {
		if err := CheckLoopback(cfg.Listen); err != nil {
			return nil, err
		}
	}
	s := &Server{cfg: cfg, metrics: newMetrics(), log: cfg.Logger, convs: map[string]*convLock{}, ready: make(chan struct{}),
		runs: map[string]*autoRun{}, runCtx: context.Background()}
	// No approval while the stop is engaged, whoever asked for it.
	cfg.Queue.Stopped = s.estopEngaged
	s.handler = s.routes()
	return s, nil
}

// Metrics returns the server's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Handler returns the server's HTTP handler (auth, limits and routes).
func (s *Server) Handler() http.Handler { return s.handler }

// Ready is closed once the server listens.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addrs returns the addresses the server listens on, once Ready.
func (s *Server) Addrs() []net.Addr { return s.addrs }

// CheckLoopback refuses a listen address that is not a loopback IP (or
// localhost).
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q is not host:port: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("listen address %q is not a loopback address; the daemon only listens on this machine", addr)
	}
	return nil
}

// LoadToken reads the bearer token from path. The file must be a regular
// file, not readable or writable by group or others, and hold at least 32
// characters.
func LoadToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("failed to open the token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("failed to stat the token file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("token file %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("token file %s has mode %04o; it must be 0600", path, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return "", fmt.Errorf("failed to read the token file: %w", err)
	}
	if len(b) > 4096 {
		return "", fmt.Errorf("token file %s is larger than 4096 bytes", path)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("token file %s must hold one token of at least 32 characters", path)
	}
	return tok, nil
}

// ListenUnix makes the socket's directory (0700), removes a stale socket
// (one nobody answers on), and listens with mode 0600.
func ListenUnix(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create the socket directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to restrict the socket directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("another claw serve is listening on %s", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("failed to remove the stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("failed to listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("failed to restrict the socket: %w", err)
	}
	return ln, nil
}

// Serve listens on the socket (and Listen, if set) and serves until ctx
// ends. Then it stops accepting, gives running requests ShutdownTimeout to
// finish, cancels the rest, and writes a receipt checkpoint.
func (s *Server) Serve(ctx context.Context) error {
	var lns []net.Listener
	closeAll := func() {
		for _, l := range lns {
			l.Close()
		}
	}
	if s.cfg.Socket != "" {
		ln, err := ListenUnix(s.cfg.Socket)
		if err != nil {
			return err
		}
		defer os.Remove(s.cfg.Socket)
		lns = append(lns, ln)
	}
	if s.cfg.Listen != "" {
		ln, err := net.Listen("tcp", s.cfg.Listen)
		if err != nil {
			closeAll()
			return fmt.Errorf("failed to listen on %s: %w", s.cfg.Listen, err)
		}
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		return errors.New("serve: neither a socket nor a listen address")
	}
	return s.ServeListeners(ctx, lns...)
}

// ServeListeners is Serve on listeners the caller opened.
func (s *Server) ServeListeners(ctx context.Context, lns ...net.Listener) error {
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadHeaderTimeout + 30*time.Second,
		WriteTimeout:      s.cfg.RequestTimeout + 10*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		s.addrs = append(s.addrs, ln.Addr())
		go func(ln net.Listener) { errc <- hs.Serve(ln) }(ln)
	}
	if s.cfg.ReloadOnSIGHUP {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-hup:
					s.Reload(ctx)
				}
			}
		}()
	}
	close(s.ready)
	go s.notifyLoop(ctx)
	s.log.Info("serving", "event", "serve_start", "socket", s.cfg.Socket, "listen", s.cfg.Listen)
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	s.log.Info("shutting down", "event", "serve_stop")
	// Autonomous runs end first: their running actions are cancelled, and
	// their last receipts written before the final checkpoint.
	s.stopRuns(errRunShutdown, true)
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	err := hs.Shutdown(sctx)
	cancel()
	if err != nil {
		// Requests still running: cancel them, then close.
		cancelBase()
		hs.Close()
	}
	if !s.waitRuns(s.cfg.ShutdownTimeout) {
		s.log.Warn("autonomous runs did not stop in time", "event", "autonomous_shutdown_timeout")
	}
	if _, cerr := s.cfg.Log.Checkpoint(context.Background()); cerr != nil {
		return fmt.Errorf("failed to write the final checkpoint: %w", cerr)
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// Reload runs the Reload hook. On success it writes a policy_loaded
// receipt with the new digest; on failure the old policies stay in force
// and the error says why.
func (s *Server) Reload(ctx context.Context) (digest string, err error) {
	if s.cfg.Reload == nil {
		return "", errors.New("reload is not configured")
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	digest, err = s.cfg.Reload(ctx)
	if s.cfg.OnReload != nil {
		defer func() { s.cfg.OnReload(digest, err) }()
	}
	if err != nil {
		s.log.Error("policy reload failed; the previous policies stay in force", "event", "policy_reload_failed", "error", err.Error())
		return "", err
	}
	if _, err = s.cfg.Log.PolicyLoaded(ctx, receipts.Policy{Digest: digest, Source: "serve:reload"}); err != nil {
		s.log.Error("policy_loaded receipt failed", "event", "receipt_error", "error", err.Error())
		return digest, err
	}
	s.log.Info("policies reloaded", "event", "policy_loaded", "digest", digest)
	// A run holds the runtime it started on: it must not go on under the
	// policies that were just replaced.
	s.stopRuns(errRunReload, false)
	return digest, nil
}

// lockConversation serializes the turns of one conversation.
func (s *Server) lockConversation(id string) func() {
	s.convMu.Lock()
	l, ok := s.convs[id]
	if !ok {
		l = &convLock{}
		s.convs[id] = l
	}
	l.refs++
	s.convMu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.convMu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(s.convs, id)
		}
		s.convMu.Unlock()
	}
}

// authorized compares the bearer token in constant time.
func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1
}

// verifyChain refreshes claw_receipt_chain_valid at most once a minute.
func (s *Server) verifyChain(ctx context.Context) {
	if s.cfg.VerifyChain == nil {
		return
	}
	s.verifyMu.Lock()
	defer s.verifyMu.Unlock()
	if !s.verifiedAt.IsZero() && time.Since(s.verifiedAt) < time.Minute {
		return
	}
	ok, err := s.cfg.VerifyChain(ctx)
	if err != nil {
		s.log.Warn("receipt chain check failed", "event", "verify_error", "error", err.Error())
		ok = false
	}
	s.metrics.SetChainValid(ok)
	s.verifiedAt = time.Now()
}
