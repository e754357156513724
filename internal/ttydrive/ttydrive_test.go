//go:build linux

package ttydrive

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// drive writes dialogue to a file and runs ttydrive on it against
// /bin/sh -c script in a temporary directory, with the given step timeout.
func drive(t *testing.T, timeout, dialogue, script string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("d.txt", []byte(dialogue), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code = run([]string{"-timeout", timeout, "d.txt", "/bin/sh", "-c", script}, &out, &errb)
	return code, out.String(), errb.String()
}

func TestAnswerPrompt(t *testing.T) {
	dialogue := `# answer the prompt
expect name\? $

send world
expect (?m)^hello, world$
`
	code, stdout, stderr := drive(t, "10s", dialogue, `printf 'name? '; read name; echo "hello, $name"; exit 7`)
	if code != 7 {
		t.Errorf("exit status %d, want 7; stderr:\n%s", code, stderr)
	}
	if want := "name? world\nhello, world\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
}

func TestSendqAndEOF(t *testing.T) {
	dialogue := `expect first> $
sendq "a\tb\r"
expect rest> $
send  two words 
eof
expect cat done
`
	code, stdout, stderr := drive(t, "10s", dialogue,
		`printf 'first> '; IFS= read -r a; echo "a=[$a]"; printf 'rest> '; cat; echo "cat done"`)
	if code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"a=[a\tb]\n", "\n two words \n", "cat done\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   int
	}{
		{name: "zero", script: "exit 0", want: 0},
		{name: "code", script: "exit 42", want: 42},
		{name: "signal", script: "kill -TERM $$", want: 128 + int(unix.SIGTERM)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := drive(t, "10s", "", tt.script)
			if code != tt.want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tt.want, stderr)
			}
		})
	}
}

func TestControllingTerminal(t *testing.T) {
	t.Setenv("TERM", "")
	script := `[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && tty && : </dev/tty && echo has-ctty; stty size; echo "TERM=$TERM"`
	code, stdout, stderr := drive(t, "10s", "", script)
	if code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{`(?m)^/dev/pts/\d+$`, `(?m)^has-ctty$`, `(?m)^40 120$`, `(?m)^TERM=xterm$`} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("stdout does not match %s:\n%s", want, stdout)
		}
	}
}

func TestCleanOutput(t *testing.T) {
	script := `printf '\033]0;a title\007\033[1mbold\033[0m \033[38;5;196mred\033[m\033(B!\r\n'`
	code, stdout, stderr := drive(t, "10s", "expect bold red!\n", script)
	if code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", code, stderr)
	}
	if want := "bold red!\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
}

func TestExpectTimeout(t *testing.T) {
	dialogue := "expect ready\nexpect never\nsend not typed\n"
	script := `sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; echo ready; wait`
	start := time.Now()
	code, stdout, stderr := drive(t, "500ms", dialogue, script)
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v", elapsed)
	}
	if !strings.Contains(stderr, "ttydrive: d.txt:2: timed out waiting for never\n") {
		t.Errorf("stderr lacks the timeout:\n%s", stderr)
	}
	if !strings.Contains(stderr, "ready") || stdout != "ready\n" {
		t.Errorf("want the output on stdout and in the report; stdout %q, stderr:\n%s", stdout, stderr)
	}
	for _, f := range []string{"sh.pid", "bg.pid"} {
		waitDead(t, f)
	}
}

func TestProgramExitsFirst(t *testing.T) {
	start := time.Now()
	code, _, stderr := drive(t, "10s", "expect never\n", "echo bye; exit 3")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v, want the exit noticed at once", elapsed)
	}
	if !strings.Contains(stderr, "d.txt:1: timed out waiting for never: /bin/sh exited first (status 3)") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestProgramDoesNotExit(t *testing.T) {
	code, stdout, stderr := drive(t, "500ms", "expect ready\n", "echo $$ > sh.pid; echo ready; exec sleep 30")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.Contains(stderr, "did not exit within 500ms") || stdout != "ready\n" {
		t.Errorf("stdout %q, stderr:\n%s", stdout, stderr)
	}
	waitDead(t, "sh.pid")
}

// waitDead fails unless the process whose pid is in file is gone (or a
// zombie nobody reaps) within a second.
func waitDead(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Second); ; {
		if unix.Kill(pid, 0) != nil || zombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			unix.Kill(pid, unix.SIGKILL)
			t.Fatalf("process %d from %s is still running", pid, file)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// pid (comm) STATE ...; comm may contain spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		dialogue string
		flag     string
		want     string
	}{
		{name: "unknown directive", dialogue: "expect x\ntype hello\n", want: `d.txt:2: unknown directive "type"`},
		{name: "bad regexp", dialogue: "# comment\nexpect (\n", want: "d.txt:2: error parsing regexp"},
		{name: "empty expect", dialogue: "expect\n", want: "d.txt:1: expect needs a regular expression"},
		{name: "unquoted sendq", dialogue: "sendq x\n", want: "d.txt:1: sendq needs one Go-quoted string"},
		{name: "bad sleep", dialogue: "\n\nsleep soon\n", want: "d.txt:3: sleep needs a duration"},
		{name: "eof argument", dialogue: "eof now\n", want: "d.txt:1: eof takes no argument"},
		{name: "bad timeout", flag: "0s", want: "-timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.flag
			if timeout == "" {
				timeout = "10s"
			}
			code, stdout, stderr := drive(t, timeout, tt.dialogue, "echo ran > ran")
			if code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if !strings.Contains(stderr, "ttydrive: "+tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if _, err := os.Stat("ran"); err == nil {
				t.Error("the program ran")
			}
		})
	}
}

func TestUsageArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"d.txt"}, {"-timeout"}, {"-bogus", "d.txt", "sh"}, {"missing.txt", "sh"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("run(%q) = %d with stderr %q, want 2 and a message", args, code, errb.String())
		}
	}
}

func TestParseLiteralText(t *testing.T) {
	steps, err := parse("d", strings.NewReader("send  two  spaces \r\nsend\n  expect a b $\nsendq `\\x03`\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{" two  spaces \r", "\r", "a b $", `\x03`}
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(steps), len(want))
	}
	for i, s := range steps {
		got := s.text
		if s.re != nil {
			got = s.re.String()
		}
		if got != want[i] {
			t.Errorf("step %d (%s): %q, want %q", i, s.pos, got, want[i])
		}
	}
}

func TestCleaner(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "plain", in: "a b\n", want: "a b\n"},
		{name: "carriage return", in: "a\r\nb\r", want: "a\nb"},
		{name: "sgr", in: "\x1b[1mbold\x1b[0m", want: "bold"},
		{name: "private csi", in: "\x1b[?2004hx\x1b[?2004l", want: "x"},
		{name: "osc bel", in: "\x1b]0;title\x07x", want: "x"},
		{name: "osc st", in: "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", want: "link"},
		{name: "lone esc", in: "\x1b=a\x1b>b\x1b7c", want: "abc"},
		{name: "charset", in: "\x1b(Bx", want: "x"},
		{name: "broken csi", in: "\x1b[12\nx", want: "\nx"},
		{name: "unterminated", in: "x\x1b[1", want: "x"},
		{name: "utf-8", in: "é\x1b[0m→", want: "é→"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(clean([]byte(tt.in))); got != tt.want {
				t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
			// The same, a byte at a time: a sequence may be split
			// between reads.
			var c cleaner
			var got []byte
			for i := range len(tt.in) {
				got = c.append(got, []byte{tt.in[i]})
			}
			if string(got) != tt.want {
				t.Errorf("byte by byte: %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTail(t *testing.T) {
	if got := string(tail([]byte("abc"), 5)); got != "abc" {
		t.Errorf("tail = %q", got)
	}
	if got := string(tail([]byte("aé"), 1)); got != "" {
		t.Errorf("tail = %q, want no broken character", got)
	}
	if got := string(tail([]byte("xaéb"), 3)); got != "éb" {
		t.Errorf("tail = %q", got)
	}
}

// TestScreen: the final output shows a redrawn line once, as last drawn,
// and keeps lines ended by a carriage return and a newline.
func TestScreen(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "line endings from the terminal", in: "one\r\ntwo\r\r\n", want: "one\ntwo\n"},
		{name: "a line editor echoing", in: "you> \ryou> r\x1b[K\ryou> ru\x1b[K\r\n", want: "you> ru\n"},
		{name: "a line editor moving to the first column", in: "you> \x1b[1G\x1b[0Kyou> hi\x1b[8G\r\n", want: "you> hi\n"},
		{name: "a spinner cleared", in: "a\n\r⠋ thinking\r\x1b[Kclaw> hi\r\n", want: "a\nclaw> hi\n"},
		{name: "a return at the very end", in: "done\r", want: ""},
		{name: "a return inside an escape sequence", in: "x\x1b]0;t\ritle\x07y\n", want: "xy\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(screen([]byte(tt.in))); got != tt.want {
				t.Errorf("screen(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
