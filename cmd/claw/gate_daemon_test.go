package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claw gate test prints a daemon's answer only when it is a decision (exit
// 0, 3 or 6, something on stdout); any other answer from whatever serves
// the socket, or none, and the action is decided in process.
func TestGateTestDaemonAnswerChecked(t *testing.T) {
	home := operatorHome(t, "")
	token := strings.Repeat("t", 40)
	if err := os.WriteFile(filepath.Join(home, "token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(home, "run", "claw.sock"))
	if err != nil {
		t.Fatal(err)
	}
	answer := make(chan string, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/gate/test" || r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(<-answer))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	t.Setenv("CLAW_GATE_DEBUG", "1")

	for _, tc := range []struct {
		name, answer string
		wantExit     int
		wantStdout   string // "" for the decision made in process
	}{
		{"a decision", `{"exit":3,"stdout":"from the daemon\n","stderr":""}`, exitDenied, "from the daemon\n"},
		{"an error status", `{"exit":1,"stdout":"decision: allow\n","stderr":"claw: error: x\n"}`, exitOK, ""},
		{"a usage status", `{"exit":2,"stdout":"x\n","stderr":""}`, exitOK, ""},
		{"no decision", `{"exit":0,"stdout":"","stderr":""}`, exitOK, ""},
		{"not an answer", `{"exit":0,"stdout":"x","extra":1}`, exitOK, ""},
		{"not JSON", `decision: allow`, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer <- tc.answer
			var out, errb bytes.Buffer
			code := runClaw(&globals{stdout: &out, stderr: &errb}, home, "gate", "test", "time")
			if code != tc.wantExit {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, tc.wantExit, out.String(), errb.String())
			}
			if tc.wantStdout != "" {
				if out.String() != tc.wantStdout || !strings.Contains(errb.String(), "answered by claw serve") {
					t.Fatalf("stdout %q, stderr %q; want the daemon's answer", out.String(), errb.String())
				}
				return
			}
			if !strings.HasPrefix(out.String(), "decision: allow") || !strings.Contains(errb.String(), "deciding in process") {
				t.Fatalf("stdout %q, stderr %q; want the decision made in process", out.String(), errb.String())
			}
		})
	}
}
