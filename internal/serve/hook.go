package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// HookRequest is one agent hook call handed to the daemon by `claw hook`
// (POST /hook/{format}): the event as the agent wrote it and the hook's
// own options.
type HookRequest struct {
	Format string
	// Config identifies the claw home and config the caller runs with
	// (ConfigID); the daemon answers only when it runs with the same.
	Config    string
	Workspace string   // the hook's --workspace, or ""
	Trusted   []string // the hook's --trust-tool names
	Deadline  time.Duration
	Event     []byte
}

// HookAnswer is what the hook process prints and exits with.
type HookAnswer struct {
	Exit   int    `json:"exit"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// HookFunc decides one hook call in the daemon. An error wrapping
// ErrOtherConfig is answered 409: the caller decides in process.
type HookFunc func(ctx context.Context, r HookRequest) (HookAnswer, error)

// ErrOtherConfig marks a hook request made with another claw home or
// config than the daemon's.
var ErrOtherConfig = errors.New("the daemon runs with another config")

// Headers of POST /hook/{format}.
const (
	hookConfigHeader    = "X-Claw-Config"
	hookWorkspaceHeader = "X-Claw-Workspace"
	hookTrustHeader     = "X-Claw-Trust-Tool"
	hookDeadlineHeader  = "X-Claw-Deadline-Ms"
)

func (s *Server) handleHook(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Hook == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "this daemon does not answer hooks")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", "the event is larger than the daemon takes")
		return
	}
	ms, err := strconv.ParseInt(r.Header.Get(hookDeadlineHeader), 10, 64)
	if err != nil || ms <= 0 || ms > int64(time.Hour/time.Millisecond) {
		writeError(w, http.StatusBadRequest, "bad_request", "missing or bad "+hookDeadlineHeader)
		return
	}
	req := HookRequest{Format: r.PathValue("format"), Config: r.Header.Get(hookConfigHeader),
		Workspace: r.Header.Get(hookWorkspaceHeader), Deadline: time.Duration(ms) * time.Millisecond, Event: body}
	if t := r.Header.Get(hookTrustHeader); t != "" {
		req.Trusted = strings.Split(t, ",")
	}
	// The hook's decision runs on a warm goroutine of its own (GoWarm).
	a, err := s.cfg.Hook(r.Context(), req)
	switch {
	case errors.Is(err, ErrOtherConfig):
		writeError(w, http.StatusConflict, "other_config", err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, "hook", "the daemon could not answer the hook")
	default:
		writeJSON(w, http.StatusOK, a)
	}
}

// ErrToken marks a daemon that did not take the caller's token.
var ErrToken = errors.New("the daemon did not take the token")

// ErrPeer marks a socket served by another user than the caller.
var ErrPeer = errors.New("the socket's server runs as another user")

// maxHookAnswer bounds the daemon's answer read by AskHook.
const maxHookAnswer = 64 << 10

// AskHook sends one hook call to the daemon on the unix socket. It checks
// the peer's uid (SO_PEERCRED) is wantUID before it sends the token. Any
// error means the daemon did not answer: the caller decides in process.
// The answer is returned as the daemon wrote it; the caller checks it.
func AskHook(ctx context.Context, socket, token string, wantUID int, r HookRequest) (HookAnswer, error) {
	h := http.Header{}
	h.Set(hookConfigHeader, r.Config)
	h.Set(hookDeadlineHeader, strconv.FormatInt(r.Deadline.Milliseconds(), 10))
	if r.Workspace != "" {
		h.Set(hookWorkspaceHeader, r.Workspace)
	}
	if len(r.Trusted) > 0 {
		h.Set(hookTrustHeader, strings.Join(r.Trusted, ","))
	}
	return ask(ctx, socket, token, wantUID, "/hook/"+r.Format, h, r.Event, maxHookAnswer)
}

// ask posts body to path on the daemon's unix socket, after checking the
// peer's uid is wantUID, and reads the answer: what the calling command
// prints and exits with, at most max bytes of JSON. One connection, no
// keep-alive; any error means the daemon did not answer. The request is
// one write and the answer one read in the caller's goroutine, without
// net/http's transport and its goroutines to wake on the way; while it
// waits, the caller's goroutine is parked in the poller, so that an idle
// runtime sleeps instead of watching a blocked system call.
func ask(ctx context.Context, socket, token string, wantUID int, path string, h http.Header, body []byte, max int64) (HookAnswer, error) {
	f, err := dialUnix(ctx, socket, wantUID)
	if err != nil {
		return HookAnswer{}, err
	}
	defer f.Close()
	stop := context.AfterFunc(ctx, func() { f.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	hr, err := http.NewRequest(http.MethodPost, "http://claw"+path, bytes.NewReader(body))
	if err != nil {
		return HookAnswer{}, err
	}
	for k, v := range h {
		hr.Header[k] = v
	}
	hr.Header.Set("Authorization", "Bearer "+token)
	hr.Header.Set("Content-Type", "application/json")
	hr.Close = true
	// A daemon may answer (413) and close before it has read it all: its
	// answer is read even when the request could not be sent whole.
	werr := hr.Write(f)
	resp, err := http.ReadResponse(bufio.NewReader(f), hr)
	if err != nil {
		if werr != nil {
			return HookAnswer{}, fmt.Errorf("sending the request: %w", werr)
		}
		return HookAnswer{}, fmt.Errorf("reading the daemon's answer: %w", err)
	}
	defer resp.Body.Close()
	return readAnswer(resp, max)
}

// readAnswer is the daemon's answer in resp: a 200 with one strict JSON
// HookAnswer of at most max bytes. A 409 wraps ErrOtherConfig, a 401
// ErrToken.
func readAnswer(resp *http.Response, max int64) (HookAnswer, error) {
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusConflict:
		return HookAnswer{}, fmt.Errorf("the daemon answered %s: %w", resp.Status, ErrOtherConfig)
	case http.StatusUnauthorized:
		return HookAnswer{}, fmt.Errorf("the daemon answered %s: %w", resp.Status, ErrToken)
	default:
		return HookAnswer{}, fmt.Errorf("the daemon answered %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return HookAnswer{}, fmt.Errorf("reading the daemon's answer: %w", err)
	}
	if int64(len(b)) > max {
		return HookAnswer{}, errors.New("the daemon's answer is too large")
	}
	var a HookAnswer
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return HookAnswer{}, fmt.Errorf("the daemon's answer is not an answer: %w", err)
	}
	return a, nil
}

// dialUnix connects a unix socket to path within ctx's deadline (a
// minute without one), checks its peer's uid, and returns it as a file
// read and written through the poller, with ctx's deadline.
func dialUnix(ctx context.Context, path string, wantUID int) (*os.File, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(time.Minute)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	// A blocking connect, bounded: a unix socket's connect does not wait
	// unless the daemon's backlog is full.
	tv := syscall.NsecToTimeval(max(time.Until(dl), time.Microsecond).Nanoseconds())
	err = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	if err == nil {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != nil {
			err = &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: os.NewSyscallError("connect", err)}
		}
	}
	if err == nil {
		err = checkPeer(fd, wantUID)
	}
	if err == nil {
		err = syscall.SetNonblock(fd, true)
	}
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path) // non-blocking: in the poller
	if err := f.SetDeadline(dl); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkPeer compares the uid of the process serving the socket fd with
// want.
func checkPeer(fd int, want int) error {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return fmt.Errorf("reading the socket's peer: %w", err)
	}
	if int(cred.Uid) != want {
		return fmt.Errorf("%w (uid %d)", ErrPeer, cred.Uid)
	}
	return nil
}
