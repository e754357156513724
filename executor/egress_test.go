//go:build linux

package executor

import (
	"context"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testNames resolves the test names to 127.0.0.1 for the proxy.
type testNames map[string]string

func (n testNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func withEgressNames(t *testing.T, n testNames) {
	t.Helper()
	old := egressResolver
	egressResolver = n
	t.Cleanup(func() { egressResolver = old })
}

func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	return p
}

func serverPort(t *testing.T, s *httptest.Server) string {
	t.Helper()
	_, p, err := net.SplitHostPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// egressSpec runs script in bash with the egress grant hosts, loopback
// allowed (the test servers).
func egressSpec(script string, hosts ...string) Spec {
	return Spec{Argv: bash(script), Net: Net{Egress: &Egress{Hosts: hosts, AllowPrivate: []string{"127.0.0.0/8"}}}}
}

func TestEgressProxy(t *testing.T) {
	requireSandbox(t)
	curl := needTool(t, "curl")
	_ = curl
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served "+r.URL.Path+"\n")
	}))
	defer srv.Close()
	port := serverPort(t, srv)
	withEgressNames(t, testNames{"a.claw.test": "127.0.0.1", "b.claw.test": "127.0.0.1", "ten.claw.test": "10.9.8.7"})

	t.Run("curl through the proxy", func(t *testing.T) {
		res := run(t, egressSpec("curl -sS http://a.claw.test:"+port+"/x", "a.claw.test:"+port))
		if string(res.Stdout) != "served /x\n" || res.ExitCode != 0 {
			t.Fatalf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
		}
		if res.Egress == nil || len(res.Egress.Conns) != 1 {
			t.Fatalf("egress report %+v", res.Egress)
		}
		c := res.Egress.Conns[0]
		if !c.Admitted || c.Method != "GET" || c.Host != "a.claw.test" || c.IP != "127.0.0.1" || c.Up == 0 || c.Down == 0 {
			t.Fatalf("record %+v", c)
		}
		if !strings.Contains(strings.Join(res.Sandbox.Namespaces, ","), "net") {
			t.Fatalf("no network namespace: %v", res.Sandbox.Namespaces)
		}
	})
	t.Run("two hosts, one curl", func(t *testing.T) {
		res := run(t, egressSpec("curl -sS http://a.claw.test:"+port+"/1 http://b.claw.test:"+port+"/2 http://a.claw.test:"+port+"/3", "a.claw.test:"+port, "b.claw.test:"+port))
		if string(res.Stdout) != "served /1\nserved /2\nserved /3\n" {
			t.Fatalf("stdout %q, stderr %q", res.Stdout, res.Stderr)
		}
		hosts := ""
		for _, c := range res.Egress.Conns {
			if !c.Admitted {
				t.Fatalf("record %+v", c)
			}
			hosts += c.Host + " "
		}
		if len(res.Egress.Conns) != 3 || strings.Count(hosts, "a.claw.test") != 2 {
			t.Fatalf("one connection per request expected: %+v", res.Egress.Conns)
		}
	})
	t.Run("host outside the grant", func(t *testing.T) {
		res := run(t, egressSpec("curl -sS -o /dev/null -w '%{http_code}' http://b.claw.test:"+port+"/x", "a.claw.test:"+port))
		if string(res.Stdout) != "403" {
			t.Fatalf("stdout %q, stderr %q", res.Stdout, res.Stderr)
		}
		if res.Egress == nil || len(res.Egress.Conns) != 1 || res.Egress.Conns[0].Admitted || !strings.Contains(res.Egress.Conns[0].Reason, "not in this action's plan") {
			t.Fatalf("egress report %+v", res.Egress)
		}
	})
	t.Run("name resolving to a private address", func(t *testing.T) {
		res := run(t, egressSpec("curl -sSf http://ten.claw.test:"+port+"/x", "ten.claw.test:"+port))
		if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "403") {
			t.Fatalf("exit %d, stderr %q", res.ExitCode, res.Stderr)
		}
		if c := res.Egress.Conns; len(c) != 1 || c[0].Reason != "ten.claw.test: 10.9.8.7 is a private address" {
			t.Fatalf("records %+v", c)
		}
	})
	t.Run("direct connections fail", func(t *testing.T) {
		// curl told not to use the proxy, bash's /dev/tcp, and the
		// proxy's own port from a socket the command binds itself
		res := run(t, egressSpec(`
curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:`+port+`/x && echo curl-direct-worked
curl -sS --max-time 5 --noproxy '*' http://a.claw.test:`+port+`/x && echo curl-name-worked
(echo > /dev/tcp/127.0.0.1/`+port+`) 2>/dev/null && echo devtcp-worked
(echo > /dev/tcp/127.0.0.1/443) 2>/dev/null && echo other-port-worked
echo done`, "a.claw.test:"+port))
		if out := string(res.Stdout); out != "done\n" {
			t.Fatalf("a direct connection worked: %q (stderr %q)", out, res.Stderr)
		}
		if len(res.Egress.Conns) != 0 {
			t.Fatalf("the proxy saw direct connections: %+v", res.Egress.Conns)
		}
	})
	t.Run("environment and descriptors", func(t *testing.T) {
		res := run(t, egressSpec(`env | grep -i -E '^(https?|all|no)_proxy=|^npm_config_.*proxy=|^PIP_PROXY=' | sort; ls /proc/self/fd | tr '\n' ' '`, "a.claw.test:"+port))
		want := "ALL_PROXY=http://127.0.0.1:3128\nHTTPS_PROXY=http://127.0.0.1:3128\nHTTP_PROXY=http://127.0.0.1:3128\nNO_PROXY=\nPIP_PROXY=http://127.0.0.1:3128\nall_proxy=http://127.0.0.1:3128\nhttp_proxy=http://127.0.0.1:3128\nhttps_proxy=http://127.0.0.1:3128\nno_proxy=\nnpm_config_https_proxy=http://127.0.0.1:3128\nnpm_config_proxy=http://127.0.0.1:3128\n0 1 2 3 "
		if got := string(res.Stdout); got != want {
			t.Fatalf("got:\n%s\nwant:\n%s", got, want)
		}
	})
}

func TestEgressClients(t *testing.T) {
	requireSandbox(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tls "+r.URL.Path+"\n")
	}))
	defer srv.Close()
	port := serverPort(t, srv)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	ca := filepath.Join(dir, "ca.pem")
	must(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "plain "+r.URL.Path+"\n")
	}))
	defer plain.Close()
	pport := serverPort(t, plain)
	// httptest's certificate names example.com
	withEgressNames(t, testNames{"example.com": "127.0.0.1", "a.claw.test": "127.0.0.1"})
	for _, tc := range []struct {
		tool, script, want string
	}{
		{"curl", "SSL_CERT_FILE=" + ca + " curl -sS https://example.com:" + port + "/c", "tls /c\n"},
		{"wget", "wget -q -O - --ca-certificate=" + ca + " https://example.com:" + port + "/w", "tls /w\n"},
		{"wget", "wget -q -O - http://a.claw.test:" + pport + "/p", "plain /p\n"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			needTool(t, tc.tool)
			s := egressSpec(tc.script, "example.com:"+port, "a.claw.test:"+pport)
			s.Read = []string{dir}
			res := run(t, s)
			if string(res.Stdout) != tc.want {
				t.Fatalf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
			}
			if len(res.Egress.Conns) != 1 || !res.Egress.Conns[0].Admitted {
				t.Fatalf("records %+v", res.Egress.Conns)
			}
		})
	}
	t.Run("SNI of another name", func(t *testing.T) {
		needTool(t, "curl")
		// curl connects to example.com through the proxy but asks the
		// server for another name: the proxy refuses the tunnel
		s := egressSpec("SSL_CERT_FILE="+ca+" curl -sS --connect-to other.example:"+port+":example.com:"+port+" https://other.example:"+port+"/c; echo exit=$?", "example.com:"+port)
		s.Read = []string{dir}
		res := run(t, s)
		if strings.Contains(string(res.Stdout), "tls /c") || len(res.Egress.Conns) != 1 || res.Egress.Conns[0].Admitted {
			t.Fatalf("stdout %q, records %+v", res.Stdout, res.Egress.Conns)
		}
	})
}

// BenchmarkEgressSpawn is what an egress grant adds to an action, paired
// with the same action without network, alternating: a network namespace,
// lo brought up, the listener handed over, the proxy started and closed.
func BenchmarkEgressSpawn(b *testing.B) {
	if err := Check().Require(0); err != nil {
		b.Skip(err)
	}
	plain := Spec{Argv: []string{"/bin/true"}}
	proxied := Spec{Argv: []string{"/bin/true"}, Net: Net{Egress: &Egress{Hosts: []string{"example.com:443"}}}}
	var d, p, added []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := Run(context.Background(), plain); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := Run(context.Background(), proxied); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		d, p, added = append(d, t1.Sub(t0)), append(p, t2.Sub(t1)), append(added, t2.Sub(t1)-t1.Sub(t0))
	}
	med := func(v []time.Duration) float64 { slices.Sort(v); return float64(v[len(v)/2]) / 1e6 }
	b.ReportMetric(med(d), "plain-ms")
	b.ReportMetric(med(p), "egress-ms")
	b.ReportMetric(med(added), "added-ms")
	b.ReportMetric(0, "ns/op")
}

// TestEgressKernelBoundary: in an egress sandbox the proxy's port is the
// only TCP destination; the host's loopback services, other ports, IPv6,
// MPTCP and listening all fail, whatever the command does with its
// environment.
func TestEgressKernelBoundary(t *testing.T) {
	requireSandbox(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := serverPort(t, srv)
	for _, tc := range []struct{ probe, target, want string }{
		{"tcp", "127.0.0.1:3128", "allowed"},
		{"tcp", "127.0.0.1:" + port, "denied"}, // the host's server, same address and port
		{"tcp", "127.0.0.1:443", "denied"},
		{"tcp6", "[::1]:3128", "denied"},
		{"mptcp", "127.0.0.1:3128", "denied"},
		{"listen", "", "denied"},
	} {
		t.Run(tc.probe+" "+tc.target, func(t *testing.T) {
			s := egressSpec("")
			s.Net.Egress.Hosts = []string{"example.com:443"}
			s.Argv = probeArgv(tc.probe, tc.target)
			s.Read = []string{testBin}
			res := run(t, s)
			if got := strings.Fields(string(res.Stdout)); len(got) == 0 || got[0] != tc.want {
				t.Fatalf("%s %s: %q (stderr %q), want %s", tc.probe, tc.target, res.Stdout, res.Stderr, tc.want)
			}
		})
	}
}

// TestEgressEndsWithTheAction: a download left running in the background
// does not outlive the action; its tunnel is closed and the server sees
// the connection end.
func TestEgressEndsWithTheAction(t *testing.T) {
	requireSandbox(t)
	needTool(t, "curl")
	stopped := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(stopped)
		for {
			if _, err := io.WriteString(w, strings.Repeat("x", 1024)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer srv.Close()
	port := serverPort(t, srv)
	withEgressNames(t, testNames{"a.claw.test": "127.0.0.1"})
	res := run(t, egressSpec("(curl -sS http://a.claw.test:"+port+"/stream > /dev/null &) ; sleep 1", "a.claw.test:"+port))
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the server still streams to the sandbox after the action ended")
	}
	if len(res.Egress.Conns) != 1 || !res.Egress.Conns[0].Admitted || res.Egress.Conns[0].Down == 0 {
		t.Fatalf("records %+v", res.Egress.Conns)
	}
}
