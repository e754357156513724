// Command serve-bench drives a real claw serve on the mock provider: many
// concurrent clients chatting over the unix socket, then a slow client
// and an oversized body, then a clean stop and claw audit verify.
//
//	go build -o /tmp/claw ./cmd/claw && go run ./bench/serve -claw /tmp/claw
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	var (
		claw    = flag.String("claw", "claw", "the claw binary")
		clients = flag.Int("clients", 50, "concurrent clients")
		chats   = flag.Int("chats", 20, "chats per client")
	)
	flag.Parse()
	if err := run(*claw, *clients, *chats); err != nil {
		fmt.Fprintln(os.Stderr, "serve-bench:", err)
		os.Exit(1)
	}
}

func run(claw string, clients, chats int) error {
	dir, err := os.MkdirTemp("", "claw-serve-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "claw")
	env := append(os.Environ(), "CLAW_HOME="+home, "HOME="+dir)
	cmd := func(args ...string) *exec.Cmd {
		c := exec.Command(claw, args...)
		c.Env = env
		return c
	}
	for _, args := range [][]string{{"init", "--workspace", filepath.Join(dir, "ws")}, {"keys", "generate", "--unencrypted"}} {
		if out, err := cmd(args...).CombinedOutput(); err != nil {
			return fmt.Errorf("claw %v: %v\n%s", args, err, out)
		}
	}
	srv := cmd("serve")
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} // never outlive the bench
	var serr bytes.Buffer
	srv.Stderr = &serr
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Process.Kill()
	sock := filepath.Join(home, "run", "claw.sock")
	tok, err := os.ReadFile(filepath.Join(home, "token"))
	if err != nil {
		return err
	}
	token := strings.TrimSpace(string(tok))
	hc := &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: clients,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}}}
	call := func(method, path string, body []byte) (int, []byte, error) {
		req, _ := http.NewRequest(method, "http://claw"+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, data, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _, err := call("GET", "/health", nil); err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("claw serve did not start:\n%s", serr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Load: every client has its own conversation; every other message
	// calls the time tool (gate, receipts, in-process tool).
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      []string
		toolCalls int
		wg        sync.WaitGroup
	)
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conv := ""
			for i := 0; i < chats; i++ {
				msg := fmt.Sprintf("hello %d from client %d", i, c)
				if i%2 == 1 {
					msg = "what time is it"
				}
				body, _ := json.Marshal(map[string]any{"conversation": conv, "new_conversation": conv == "", "message": msg})
				t0 := time.Now()
				code, data, err := call("POST", "/chat", body)
				d := time.Since(t0)
				var res struct {
					Conversation string `json:"conversation"`
					ToolCalls    []struct {
						Status string `json:"status"`
					} `json:"tool_calls"`
				}
				if err == nil && code == 200 {
					err = json.Unmarshal(data, &res)
				}
				mu.Lock()
				latencies = append(latencies, d)
				switch {
				case err != nil:
					errs = append(errs, err.Error())
				case code != 200:
					errs = append(errs, fmt.Sprintf("%d %s", code, data))
				default:
					for _, tc := range res.ToolCalls {
						if tc.Status != "ok" {
							errs = append(errs, "tool call "+tc.Status)
						}
						toolCalls++
					}
				}
				mu.Unlock()
				if res.Conversation != "" {
					conv = res.Conversation
				}
			}
		}(c)
	}
	wg.Wait()
	wall := time.Since(start)
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	fmt.Printf("chats:        %d clients x %d = %d in %s (%.0f/s)\n", clients, chats, len(latencies), wall.Round(time.Millisecond), float64(len(latencies))/wall.Seconds())
	fmt.Printf("tool calls:   %d\n", toolCalls)
	fmt.Printf("errors:       %d\n", len(errs))
	for i, e := range errs {
		if i == 5 {
			break
		}
		fmt.Printf("  %s\n", e)
	}
	fmt.Printf("latency:      p50 %s  p90 %s  p99 %s  max %s\n", pct(0.5).Round(time.Microsecond), pct(0.9).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), latencies[len(latencies)-1].Round(time.Microsecond))

	// Oversized body.
	big := append(append([]byte(`{"message":"`), bytes.Repeat([]byte("a"), 2<<20)...), `"}`...)
	code, _, err := call("POST", "/chat", big)
	fmt.Printf("oversized:    %d bytes -> %d %v\n", len(big), code, errOrEmpty(err))

	// Slow client: half a request line, then nothing.
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	t0 := time.Now()
	fmt.Fprint(conn, "GET /status HTTP/1.1\r\nHost: claw\r\nX-Slow: ")
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	_, rerr := io.ReadAll(conn)
	conn.Close()
	fmt.Printf("slow client:  cut off after %s (%v)\n", time.Since(t0).Round(time.Millisecond), errOrEmpty(rerr))

	// Clean stop, then verify the chain.
	t0 = time.Now()
	srv.Process.Signal(syscall.SIGTERM)
	werr := srv.Wait()
	fmt.Printf("shutdown:     %s, %v\n", time.Since(t0).Round(time.Millisecond), errOrEmpty(werr))
	out, verr := cmd("audit", "verify").CombinedOutput()
	verdict := "?"
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Receipts:") || l == "VERIFIED" || l == "TAMPER-EVIDENT" {
			fmt.Printf("audit:        %s\n", strings.TrimSpace(l))
			verdict = l
		}
	}
	if verr != nil || verdict != "VERIFIED" || len(errs) > 0 || code != http.StatusRequestEntityTooLarge || werr != nil {
		return fmt.Errorf("failed (verify: %v)", verr)
	}
	return nil
}

func errOrEmpty(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
