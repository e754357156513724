package planckclaw

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channeltest"
)

func start(t *testing.T) (*Server, *channeltest.Rig, string) {
	t.Helper()
	rig := channeltest.New(t, "planckclaw", channeltest.Options{ToolsAllow: []string{"time", "shell", "file_list"}})
	rig.Env.Chat = func(ctx context.Context, user, conv, text string) (string, error) {
		return "you (" + user + ", " + conv + ") said: " + text, nil
	}
	dir := filepath.Join(t.TempDir(), "fifos")
	s, err := New(rig.Env, Config{Dir: dir, WriteWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
	})
	return s, rig, dir
}

// shWrite writes to a FIFO the way a shell bridge does: open, write, close.
func shWrite(t *testing.T, fifo, text string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `printf '%s' "$1" > "$2"`, "sh", text, fifo)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writing %s: %v %s", fifo, err, out)
	}
}

// readFrame opens a FIFO the way PlanckClaw's agent does (on demand) and
// reads one frame ending in end.
func readFrame(t *testing.T, fifo, end string) string {
	t.Helper()
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_RDONLY, 0)
		if err != nil {
			ch <- res{err: err}
			return
		}
		var buf bytes.Buffer
		b := make([]byte, 4096)
		reopened := 0
		for !strings.HasSuffix(buf.String(), end) {
			n, err := f.Read(b)
			buf.Write(b[:n])
			if errors.Is(err, io.EOF) && buf.Len() == 0 && reopened < 3 {
				// Opened while claw was closing a write end whose reader
				// had gone: claw opens it again and writes the line
				// again, and a reader opens again too, as a shell loop
				// reading the FIFO does.
				reopened++
				f.Close()
				if f, err = os.OpenFile(fifo, os.O_RDONLY, 0); err == nil {
					continue
				}
			}
			if err != nil {
				f.Close()
				ch <- res{buf.String(), err}
				return
			}
		}
		f.Close() // before the next request, as PlanckClaw's agent does
		ch <- res{s: buf.String()}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("reading %s: %v (read %q)", fifo, r.err, r.s)
		}
		return r.s
	case <-time.After(20 * time.Second):
		t.Fatalf("nothing on %s", fifo)
	}
	return ""
}

func toolRoundTrip(t *testing.T, dir, line string) string {
	t.Helper()
	shWrite(t, filepath.Join(dir, ClawIn), line)
	out := readFrame(t, filepath.Join(dir, ClawOut), "\n\n")
	if strings.Count(out, "\n\n") != 1 {
		t.Fatalf("frame %q has a blank line inside", out)
	}
	return strings.TrimSuffix(out, "\n\n")
}

// TestClawBridge: both discovery words list the channel's tools as a
// Claude tools array; an allowed call runs, a denied call comes back as a
// tool error naming its rules, bad and oversized lines are answered with
// an error frame, and every call is receipted under the channel.
func TestClawBridge(t *testing.T) {
	_, rig, dir := start(t)
	for _, word := range []string{"list_tools", "__list_tools__"} {
		var tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		out := toolRoundTrip(t, dir, word+"\n")
		if err := json.Unmarshal([]byte(out), &tools); err != nil || len(tools) != 3 {
			t.Fatalf("%s: %q (%v)", word, out, err)
		}
		for _, tl := range tools {
			if tl.Name == "" || tl.Description == "" || !json.Valid(tl.InputSchema) {
				t.Errorf("%s: tool %+v", word, tl)
			}
		}
	}
	if out := toolRoundTrip(t, dir, "time\t{}\n"); !strings.Contains(out, "2026-11-27") {
		t.Fatalf("time = %q", out)
	}
	out := toolRoundTrip(t, dir, "shell\t{\"command\":\"rm -rf /\"}\n")
	if !strings.HasPrefix(out, "error: denied by policy: ") {
		t.Fatalf("denied call = %q", out)
	}
	if out := toolRoundTrip(t, dir, "http\t{\"url\":\"https://example.com\"}\n"); !strings.Contains(out, broker.RuleToolNotAllowed) {
		t.Fatalf("call outside tools_allow = %q", out)
	}
	if out := toolRoundTrip(t, dir, "shell {}\n"); !strings.HasPrefix(out, "error: expected list_tools") {
		t.Fatalf("bad line = %q", out)
	}
	if out := toolRoundTrip(t, dir, "time\t{\"a\":\""+strings.Repeat("x", MaxToolLine)+"\"}\n"); !strings.Contains(out, "longer than") {
		t.Fatalf("oversized line = %q", out)
	}
	if out := toolRoundTrip(t, dir, "time\t\n"); !strings.Contains(out, "2026-11-27") {
		t.Fatalf("after an oversized line: %q", out)
	}
	n := 0
	for _, b := range rig.Bodies(t) {
		if b.Type == "decision" {
			n++
			if b.Channel != "planckclaw" || b.User != ToolUser {
				t.Errorf("receipt %d: channel %q user %q", b.Seq, b.Channel, b.User)
			}
		}
	}
	if n != 4 {
		t.Errorf("%d decisions, want 4", n)
	}
}

// TestNoReaderDoesNotWedge: a result nobody reads is dropped after
// WriteWait, and the next request is served.
func TestNoReaderDoesNotWedge(t *testing.T) {
	_, _, dir := start(t)
	shWrite(t, filepath.Join(dir, ClawIn), "time\t{}\n") // nobody reads claw_out
	time.Sleep(time.Second)                              // more than WriteWait: that result is dropped
	if out := toolRoundTrip(t, dir, "list_tools\n"); !strings.HasPrefix(out, "[") {
		t.Fatalf("got %q", out)
	}
}

// TestInteract: lines of interact_in are turns of the agent for their
// channel id, escapes decoded on the way in and encoded on the way out;
// a reader that goes away and comes back gets the next reply.
func TestInteract(t *testing.T) {
	_, _, dir := start(t)
	out := filepath.Join(dir, InteractOut)
	lines := make(chan string, 1)
	var r *os.File
	go func() { // the open blocks until claw opens its end, with its first reply
		f, err := os.OpenFile(out, os.O_RDONLY, 0)
		if err != nil {
			lines <- err.Error()
			return
		}
		r = f
		line, _ := bufio.NewReader(f).ReadString('\n')
		lines <- line
	}()
	shWrite(t, filepath.Join(dir, InteractIn), `1234567890123456789`+"\t"+`two\nlines\tand \\ a \x`+"\n")
	var line string
	select {
	case line = <-lines:
	case <-time.After(20 * time.Second):
		t.Fatal("no reply")
	}
	want := `1234567890123456789` + "\t" + `you (1234567890123456789, planckclaw:1234567890123456789) said: two\nlines\tand \\ a \\x` + "\n"
	if line != want {
		t.Fatalf("reply\n got %q\nwant %q", line, want)
	}
	r.Close() // the reader goes away
	shWrite(t, filepath.Join(dir, InteractIn), "42\tagain\n")
	time.Sleep(20 * time.Millisecond)
	if got := readFrame(t, out, "\n"); got != "42\tyou (42, planckclaw:42) said: again\n" {
		t.Fatalf("after the reader came back: %q", got)
	}
	shWrite(t, filepath.Join(dir, InteractIn), "notanid\thello\n")
	shWrite(t, filepath.Join(dir, InteractIn), "7\t"+strings.Repeat("y", MaxInteractLine)+"\n")
	if got := readFrame(t, out, "\n"); !strings.HasPrefix(got, "7\terror: message longer than") {
		t.Fatalf("oversized line: %q", got)
	}
}

// TestPrepareRefuses: a symlinked FIFO, a FIFO open to others, a
// directory that is a symlink, and a regular file in a FIFO's place are
// refused.
func TestPrepareRefuses(t *testing.T) {
	root := t.TempDir()
	other := filepath.Join(root, "elsewhere")
	if err := syscall.Mkfifo(other, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(dir string){
		"symlinked FIFO": func(dir string) { os.Symlink(other, filepath.Join(dir, ClawIn)) },
		"FIFO open to others": func(dir string) {
			syscall.Mkfifo(filepath.Join(dir, ClawOut), 0o600)
			os.Chmod(filepath.Join(dir, ClawOut), 0o666)
		},
		"regular file": func(dir string) { os.WriteFile(filepath.Join(dir, InteractIn), nil, 0o600) },
	}
	for name, setup := range cases {
		dir := filepath.Join(root, strings.ReplaceAll(name, " ", "_"))
		os.Mkdir(dir, 0o700)
		setup(dir)
		if err := Prepare(dir); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if os.Geteuid() == 0 { // a directory another user owns (and could swap FIFOs in)
		theirs := filepath.Join(root, "theirs")
		os.Mkdir(theirs, 0o700)
		os.Chown(theirs, 65534, 65534)
		if err := Prepare(theirs); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Errorf("a directory of another user: %v", err)
		}
	}
	os.Symlink(filepath.Join(root, "regular_file"), filepath.Join(root, "linkdir"))
	if err := Prepare(filepath.Join(root, "linkdir")); err == nil {
		t.Error("a symlinked directory was accepted")
	}
	// openFIFO refuses a symlink even when it was made after Prepare.
	dir := filepath.Join(root, "ok")
	if err := Prepare(dir); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", fi.Mode())
	}
	os.Remove(filepath.Join(dir, ClawOut))
	os.Symlink(other, filepath.Join(dir, ClawOut))
	if f, err := openFIFO(filepath.Join(dir, ClawOut), syscall.O_RDWR); err == nil {
		f.Close()
		t.Error("opened a FIFO through a symlink")
	}
}

// TestOneServerPerDir: a second server on the same directory refuses to
// run instead of taking the first one's requests.
func TestOneServerPerDir(t *testing.T) {
	_, rig, dir := start(t)
	toolRoundTrip(t, dir, "list_tools\n") // the first server serves, so it holds the lock
	second, err := New(rig.Env, Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := second.Run(ctx); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("second server: %v", err)
	}
	if out := toolRoundTrip(t, dir, "list_tools\n"); !strings.HasPrefix(out, "[") {
		t.Fatalf("first server after the refusal: %q", out)
	}
}
