package serve

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzReadResponse: readResponse takes only answers net/http reads the
// same way (the same status code, for a 200 the same body, of at most
// max bytes), and never panics.
func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 35\r\n\r\n{\"exit\":0,\"stdout\":\"\",\"stderr\":\"\"}\n"))
	f.Add([]byte("HTTP/1.1 409 Conflict\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.0 200 OK\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\nContent-Length: 2\n\n{}"))
	const max = 64
	f.Fuzz(func(t *testing.T, raw []byte) {
		status, code, body, err := readResponse(bufio.NewReaderSize(bytes.NewReader(raw), 256), max)
		if err != nil {
			return
		}
		resp, herr := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if herr != nil {
			t.Fatalf("%q: taken as %d %q, net/http refuses it: %v", raw, code, body, herr)
		}
		if resp.StatusCode != code || resp.Status != status {
			t.Fatalf("%q: status %q (%d), net/http %q (%d)", raw, status, code, resp.Status, resp.StatusCode)
		}
		if code != http.StatusOK {
			return
		}
		hb, herr := io.ReadAll(resp.Body)
		if herr != nil || !bytes.Equal(hb, body) || len(body) > max {
			t.Fatalf("%q: body %q, net/http %q (%v)", raw, body, hb, herr)
		}
	})
}

// What writeRequest writes is one request net/http's server reads as
// sent; a header that could end early is refused, not sent.
func TestWriteRequest(t *testing.T) {
	h := http.Header{}
	h.Set(hookConfigHeader, "sha256:abc")
	h.Set(hookWorkspaceHeader, "/w s/é")
	var b bytes.Buffer
	if err := writeRequest(&b, "/hook/claude-code", "tok", h, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	if r.Method != "POST" || r.URL.Path != "/hook/claude-code" || r.Header.Get("Authorization") != "Bearer tok" || !r.Close ||
		r.Header.Get(hookWorkspaceHeader) != "/w s/é" || r.Header.Get(hookConfigHeader) != "sha256:abc" || string(body) != `{"a":1}` {
		t.Errorf("the daemon would read %s %s %v %q", r.Method, r.URL, r.Header, body)
	}
	for _, bad := range []struct{ path, k, v string }{
		{"/hook/x", hookWorkspaceHeader, "/w\r\nX-Claw-Config: other"},
		{"/hook/x", hookWorkspaceHeader, "/w\n"},
		{"/hook/x", "X Bad", "v"},
		{"/hook/x y", hookWorkspaceHeader, "/w"},
		{"hook", hookWorkspaceHeader, "/w"},
	} {
		h := http.Header{bad.k: {bad.v}}
		var out bytes.Buffer
		if err := writeRequest(&out, bad.path, "tok", h, nil); err == nil || out.Len() != 0 {
			t.Errorf("%q %q=%q: sent %q, want an error and nothing sent", bad.path, bad.k, bad.v, out.String())
		}
	}
}

// A long answer (a deny with many reasons) comes with its
// Content-Length, which the client needs, where net/http's server would
// send chunks.
func TestAskHookLongAnswer(t *testing.T) {
	want := HookAnswer{Exit: 0, Stdout: strings.Repeat("r", 5000), Stderr: "e"}
	r := newRig(t, func(c *Config) {
		c.Hook = func(context.Context, HookRequest) (HookAnswer, error) { return want, nil }
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if a, err := AskHook(ctx, r.sock, token, os.Getuid(), hookRequest()); err != nil || a != want {
		t.Fatalf("answer of %d bytes (%v), want %d", len(a.Stdout), err, len(want.Stdout))
	}
}
