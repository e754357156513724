package serve

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func hookRequest() HookRequest {
	return HookRequest{Format: "claude-code", Config: "sha256:abc", Workspace: "/w", Trusted: []string{"TodoWrite", "Task"},
		Deadline: 1500 * time.Millisecond, Event: []byte(`{"tool_name":"Read"}`)}
}

func TestAskHookAnswersFromTheDaemon(t *testing.T) {
	var got HookRequest
	want := HookAnswer{Exit: 0, Stdout: "{\"x\":1}\n", Stderr: "note"}
	r := newRig(t, func(c *Config) {
		c.Hook = func(_ context.Context, req HookRequest) (HookAnswer, error) {
			got = req
			return want, nil
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := AskHook(ctx, r.sock, token, os.Getuid(), hookRequest())
	if err != nil {
		t.Fatal(err)
	}
	if a != want {
		t.Errorf("answer %+v, want %+v", a, want)
	}
	if !reflect.DeepEqual(got, hookRequest()) {
		t.Errorf("the daemon was asked %+v, want %+v", got, hookRequest())
	}
}

// Every refusal of the daemon is an error, so the hook decides in process.
func TestAskHookRefusals(t *testing.T) {
	var calls atomic.Int32
	r := newRig(t, func(c *Config) {
		c.Hook = func(_ context.Context, req HookRequest) (HookAnswer, error) {
			calls.Add(1)
			if req.Config != "sha256:abc" {
				return HookAnswer{}, ErrOtherConfig
			}
			return HookAnswer{}, errors.New("boom")
		}
	})
	none := newRig(t, nil) // a daemon without the hook
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	other := hookRequest()
	other.Config = "sha256:other"
	big := hookRequest()
	big.Event = []byte(strings.Repeat("x", 5000)) // the rig takes 4096 bytes
	for _, c := range []struct {
		name, sock, token string
		req               HookRequest
		want              string
	}{
		{"wrong token", r.sock, token + "x", hookRequest(), "401"},
		{"other config", r.sock, token, other, "409"},
		{"daemon error", r.sock, token, hookRequest(), "500"},
		{"too large", r.sock, token, big, "413"},
		{"no hook", none.sock, token, hookRequest(), "503"},
		{"no daemon", filepath.Join(t.TempDir(), "none.sock"), token, hookRequest(), "no such file"},
	} {
		a, err := AskHook(ctx, c.sock, c.token, os.Getuid(), c.req)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: answer %+v, error %v; want an error with %q", c.name, a, err, c.want)
		}
	}
	// the refusals a hook may ask again about, by the config it parses
	if _, err := AskHook(ctx, r.sock, token+"x", os.Getuid(), hookRequest()); !errors.Is(err, ErrToken) {
		t.Errorf("wrong token: error %v, want ErrToken", err)
	}
	if _, err := AskHook(ctx, r.sock, token, os.Getuid(), other); !errors.Is(err, ErrOtherConfig) {
		t.Errorf("other config: error %v, want ErrOtherConfig", err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("the hook ran %d times, want 3 (other config twice, daemon error)", n)
	}
}

// fakeDaemon listens on a unix socket and hands each connection to serve.
// It returns the socket and what the connections sent.
func fakeDaemon(t *testing.T, serve func(c net.Conn)) (string, *atomic.Int64) {
	t.Helper()
	dir, err := os.MkdirTemp("", "claw-hook")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var got atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(&countingConn{Conn: c, n: &got})
			}()
		}
	}()
	return sock, &got
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// readRequest reads a request's head and body as the fake daemon's first
// step.
func readRequest(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	io.Copy(io.Discard, c)
}

func answerWith(raw string) func(net.Conn) {
	return func(c net.Conn) {
		readRequest(c)
		io.WriteString(c, raw)
	}
}

// A daemon that dies mid-request, hangs, or answers anything but a hook
// answer is an error: the hook then decides in process.
func TestAskHookBadDaemons(t *testing.T) {
	for _, c := range []struct {
		name  string
		serve func(net.Conn)
	}{
		{"killed mid-request", func(c net.Conn) { c.Read(make([]byte, 10)) }},
		{"killed mid-answer", answerWith("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{\"exit\":0,")},
		{"hangs", func(c net.Conn) { time.Sleep(5 * time.Second) }},
		{"not http", answerWith("garbage\r\n\r\n")},
		{"not json", answerWith("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nallow")},
		{"other fields", answerWith("HTTP/1.1 200 OK\r\nContent-Length: 27\r\n\r\n{\"exit\":0,\"decision\":\"ok\"}\n")},
		{"wrong types", answerWith("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"exit\":\"0\"}\n")},
		{"too large", answerWith("HTTP/1.1 200 OK\r\n\r\n{\"stdout\":\"" + strings.Repeat("a", 70<<10) + "\"}")},
		{"redirect", answerWith("HTTP/1.1 302 Found\r\nLocation: /hook/codex\r\nContent-Length: 0\r\n\r\n")},
	} {
		t.Run(c.name, func(t *testing.T) {
			sock, _ := fakeDaemon(t, c.serve)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			a, err := AskHook(ctx, sock, token, os.Getuid(), hookRequest())
			if err == nil {
				t.Fatalf("answer %+v from a broken daemon, want an error", a)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("gave up after %v, past the context's deadline", d)
			}
		})
	}
}

// The token is sent only to a socket served by the expected user.
func TestAskHookChecksThePeerFirst(t *testing.T) {
	sock, got := fakeDaemon(t, answerWith("HTTP/1.1 200 OK\r\nContent-Length: 34\r\n\r\n{\"exit\":0,\"stdout\":\"\",\"stderr\":\"\"}"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := AskHook(ctx, sock, token, os.Getuid(), hookRequest()); err != nil {
		t.Fatalf("same user: %v", err)
	}
	sent := got.Load()
	if sent == 0 {
		t.Fatal("the fake daemon read nothing from the same user")
	}
	_, err := AskHook(ctx, sock, token, os.Getuid()+1, hookRequest())
	if !errors.Is(err, ErrPeer) {
		t.Fatalf("another user's socket: error %v, want ErrPeer", err)
	}
	time.Sleep(400 * time.Millisecond) // the fake daemon's read deadline
	if n := got.Load(); n != sent {
		t.Errorf("%d bytes were sent to another user's socket, want none", n-sent)
	}
}

// A cancelled context (the hook's SIGINT or SIGTERM) ends the wait for a
// daemon that does not answer, well before the context's deadline.
func TestAskHookCancelled(t *testing.T) {
	sock, _ := fakeDaemon(t, func(c net.Conn) { time.Sleep(5 * time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	a, err := AskHook(ctx, sock, token, os.Getuid(), hookRequest())
	if err == nil {
		t.Fatalf("answer %+v after the context was cancelled, want an error", a)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("gave up after %v, want soon after the cancel", d)
	}
}
