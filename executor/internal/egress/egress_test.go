package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mapResolver resolves names from a table and counts its lookups.
type mapResolver struct {
	mu    sync.Mutex
	names map[string][]string
	calls map[string]int
	// next, when set, replaces the answer after the first lookup of a
	// name (a rebinding DNS server).
	next map[string][]string
}

func (r *mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[host]++
	list, ok := r.names[host]
	if n, rebind := r.next[host]; rebind && r.calls[host] > 1 {
		list = n
	}
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range list {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func (r *mapResolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// startProxy serves a proxy on 127.0.0.1 and returns its address; the
// report is delivered by the returned function (which closes it).
func startProxy(t *testing.T, cfg Config) (string, func() Report) {
	t.Helper()
	addr, p := startProxyP(t, cfg)
	var once sync.Once
	var rep Report
	stop := func() Report {
		// let the connections the test made finish on their own first
		for deadline := time.Now().Add(5 * time.Second); p.conns.Load() > 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		once.Do(func() { rep = p.Close() })
		return rep
	}
	t.Cleanup(func() { stop() })
	return addr, stop
}

// startProxyP serves a proxy on 127.0.0.1; the test closes it.
func startProxyP(t *testing.T, cfg Config) (string, *Proxy) {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	t.Cleanup(func() { p.Close() })
	return l.Addr().String(), p
}

func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tcpServer serves every connection on 127.0.0.1 with handle, in a
// goroutine of its own, and returns its port.
func tcpServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return port(t, l.Addr().String())
}

func proxyClient(proxyAddr string, roots *x509.CertPool, serverName string) *http.Client {
	pu := &url.URL{Scheme: "http", Host: proxyAddr}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:             func(*http.Request) (*url.URL, error) { return pu, nil },
		TLSClientConfig:   &tls.Config{RootCAs: roots, ServerName: serverName},
		DisableKeepAlives: true,
	}}
}

func onlyRecord(t *testing.T, rep Report) Record {
	t.Helper()
	if len(rep.Conns) != 1 {
		t.Fatalf("got %d records, want 1: %v", len(rep.Conns), rep.Conns)
	}
	return rep.Conns[0]
}

func TestPlainHTTPThroughProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s %s host=%s conn=%s proxyauth=%q", r.Method, r.URL.Path, r.Host, r.Header.Get("Connection"), r.Header.Get("Proxy-Authorization"))
	}))
	defer srv.Close()
	p := port(t, srv.Listener.Addr().String())
	res := &mapResolver{names: map[string][]string{"a.claw.test": {"127.0.0.1"}}}
	addr, stop := startProxy(t, Config{Hosts: []string{"a.claw.test:" + p}, AllowPrivate: loopback, Resolver: res})

	req, _ := http.NewRequest("GET", "http://a.claw.test:"+p+"/x", nil)
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
	resp, err := proxyClient(addr, nil, "").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := "hello GET /x host=a.claw.test:" + p + ` conn=close proxyauth=""`
	if resp.StatusCode != 200 || string(body) != want {
		t.Fatalf("got %d %q, want 200 %q", resp.StatusCode, body, want)
	}
	r := onlyRecord(t, stop())
	if !r.Admitted || r.Method != "GET" || r.Host != "a.claw.test" || strconv.Itoa(int(r.Port)) != p || r.IP != "127.0.0.1" || r.Up == 0 || r.Down < int64(len(want)) || r.Close != "eof" {
		t.Fatalf("record = %+v", r)
	}
}

func TestConnectTLSThroughProxy(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure "+r.URL.Path)
	}))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	p := port(t, srv.Listener.Addr().String())
	res := &mapResolver{names: map[string][]string{"example.com": {"127.0.0.1"}}}
	addr, stop := startProxy(t, Config{Hosts: []string{"example.com:" + p}, AllowPrivate: loopback, Resolver: res})

	// httptest's certificate is for example.com
	resp, err := proxyClient(addr, roots, "").Get("https://example.com:" + p + "/y")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "secure /y" {
		t.Fatalf("body %q", body)
	}
	r := onlyRecord(t, stop())
	if !r.Admitted || r.Method != "CONNECT" || r.Host != "example.com" || r.IP != "127.0.0.1" || r.Up == 0 || r.Down == 0 {
		t.Fatalf("record = %+v", r)
	}
}

// rawRequest sends one request head to the proxy and returns the status
// line and the X-Claw-Egress header of its answer.
func rawRequest(t *testing.T, proxyAddr, head string) (status, egress string) {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, head)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", head, err)
	}
	resp.Body.Close()
	return resp.Status, resp.Header.Get("X-Claw-Egress")
}

func TestRefusals(t *testing.T) {
	res := &mapResolver{names: map[string][]string{
		"ok.claw.test":      {"127.0.0.1"},
		"private.claw.test": {"10.1.2.3"},
		"meta.claw.test":    {"169.254.169.254"},
		"mapped.claw.test":  {"::ffff:169.254.169.254"},
		"nat64.claw.test":   {"64:ff9b::a9fe:a9fe"},
		"ula.claw.test":     {"fd12::1"},
	}}
	hosts := []string{"ok.claw.test:443", "private.claw.test:443", "meta.claw.test:80", "mapped.claw.test:443", "nat64.claw.test:443", "ula.claw.test:443",
		"127.0.0.1:443", "[::1]:443", "169.254.169.254:80", "[::ffff:169.254.169.254]:80", "0.0.0.0:443"}
	addr, stop := startProxy(t, Config{Hosts: hosts, Resolver: res})
	for _, tc := range []struct {
		name, head, status string
	}{
		{"host outside the plan", "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", "403 claw egress: evil.example:443 is not in this action's plan"},
		{"port outside the grant", "CONNECT ok.claw.test:8443 HTTP/1.1\r\n\r\n", "403 claw egress: ok.claw.test:8443 is not in this action's plan"},
		{"loopback literal", "CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", "403 claw egress: 127.0.0.1: 127.0.0.1 is a loopback address"},
		{"IPv6 loopback", "CONNECT [::1]:443 HTTP/1.1\r\n\r\n", "403 claw egress: ::1: ::1 is a loopback address"},
		{"metadata literal", "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n", "403 claw egress: 169.254.169.254: 169.254.169.254 is a metadata address"},
		{"mapped metadata literal", "CONNECT [::ffff:169.254.169.254]:80 HTTP/1.1\r\n\r\n", "403 claw egress: 169.254.169.254: 169.254.169.254 is a metadata address"},
		{"unspecified", "CONNECT 0.0.0.0:443 HTTP/1.1\r\n\r\n", "403 claw egress: 0.0.0.0: 0.0.0.0 is a unspecified address"},
		{"decimal address", "CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", `400 claw egress: host "2130706433" is an address in a non-canonical notation`},
		{"short dotted address", "CONNECT 127.1:443 HTTP/1.1\r\n\r\n", `400 claw egress: host "127.1" is an address in a non-canonical notation`},
		{"name resolving to 10.x", "CONNECT private.claw.test:443 HTTP/1.1\r\n\r\n", "403 claw egress: private.claw.test: 10.1.2.3 is a private address"},
		{"name resolving to metadata", "GET http://meta.claw.test/ HTTP/1.1\r\nHost: meta.claw.test\r\n\r\n", "403 claw egress: meta.claw.test: 169.254.169.254 is a metadata address"},
		{"name resolving to mapped metadata", "CONNECT mapped.claw.test:443 HTTP/1.1\r\n\r\n", "403 claw egress: mapped.claw.test: 169.254.169.254 is a metadata address"},
		{"name resolving to NAT64", "CONNECT nat64.claw.test:443 HTTP/1.1\r\n\r\n", "403 claw egress: nat64.claw.test: 64:ff9b::a9fe:a9fe is a reserved address"},
		{"name resolving to ULA", "CONNECT ula.claw.test:443 HTTP/1.1\r\n\r\n", "403 claw egress: ula.claw.test: fd12::1 is a private address"},
		{"loopback without allow_private_cidrs", "CONNECT ok.claw.test:443 HTTP/1.1\r\n\r\n", "403 claw egress: ok.claw.test: 127.0.0.1 is a loopback address"},
		{"userinfo", "GET http://user@ok.claw.test/ HTTP/1.1\r\nHost: ok.claw.test\r\n\r\n", "400 claw egress: user information in the target"},
		{"Host mismatch", "GET http://ok.claw.test/ HTTP/1.1\r\nHost: evil.example\r\n\r\n", "400 claw egress: the Host header does not name the url's host"},
		{"origin form", "GET / HTTP/1.1\r\nHost: ok.claw.test\r\n\r\n", "400 claw egress: the target is not an absolute http:// url"},
		{"unsupported method", "TRACE http://ok.claw.test/ HTTP/1.1\r\nHost: ok.claw.test\r\n\r\n", "405 claw egress: method TRACE is not proxied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr := rawRequest(t, addr, tc.head)
			if status != tc.status {
				t.Errorf("status %q, want %q", status, tc.status)
			}
			if !strings.HasPrefix(hdr, "refused; ") || !strings.HasSuffix(tc.status, strings.TrimPrefix(hdr, "refused; ")) {
				t.Errorf("X-Claw-Egress %q does not give the reason of %q", hdr, tc.status)
			}
		})
	}
	if n := res.lookups("evil.example"); n != 0 {
		t.Errorf("a host outside the plan was looked up %d times", n)
	}
	rep := stop()
	if len(rep.Conns) != 19 {
		t.Fatalf("%d records, want 19", len(rep.Conns))
	}
	for _, r := range rep.Conns {
		if r.Admitted || r.Reason == "" || r.Up != 0 || r.Down != 0 {
			t.Errorf("record %+v: want refused with a reason and no bytes", r)
		}
	}
}

func TestTrailingDotAndCaseNormalise(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	p := port(t, srv.Listener.Addr().String())
	res := &mapResolver{names: map[string][]string{"a.claw.test": {"127.0.0.1"}}}
	addr, stop := startProxy(t, Config{Hosts: []string{"A.Claw.Test.:" + p}, AllowPrivate: loopback, Resolver: res})
	status, _ := rawRequest(t, addr, "GET http://a.CLAW.test.:"+p+"/ HTTP/1.1\r\nHost: a.claw.test:"+p+"\r\n\r\n")
	if status != "200 OK" {
		t.Fatalf("status %q", status)
	}
	if r := onlyRecord(t, stop()); r.Host != "a.claw.test" || !r.Admitted {
		t.Fatalf("record %+v", r)
	}
}

func TestVettedAddressIsTheOneDialled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	p := port(t, srv.Listener.Addr().String())
	// The first answer holds a refused address and the allowed one; a
	// second lookup would answer the metadata address only.
	res := &mapResolver{
		names: map[string][]string{"r.claw.test": {"10.0.0.1", "127.0.0.1"}},
		next:  map[string][]string{"r.claw.test": {"169.254.169.254"}},
	}
	addr, stop := startProxy(t, Config{Hosts: []string{"r.claw.test:" + p}, AllowPrivate: loopback, Resolver: res})
	status, _ := rawRequest(t, addr, "GET http://r.claw.test:"+p+"/ HTTP/1.1\r\nHost: r.claw.test:"+p+"\r\n\r\n")
	if status != "200 OK" {
		t.Fatalf("status %q", status)
	}
	if r := onlyRecord(t, stop()); r.IP != "127.0.0.1" {
		t.Fatalf("dialled %s, want the vetted 127.0.0.1", r.IP)
	}
	if n := res.lookups("r.claw.test"); n != 1 {
		t.Fatalf("%d lookups, want exactly 1", n)
	}
}

func TestSNIMustMatchConnectHost(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	p := port(t, srv.Listener.Addr().String())
	res := &mapResolver{names: map[string][]string{"example.com": {"127.0.0.1"}}}
	addr, stop := startProxy(t, Config{Hosts: []string{"example.com:" + p}, AllowPrivate: loopback, Resolver: res})
	// CONNECT example.com, then a ClientHello for another name (domain
	// fronting the other way round)
	if _, err := proxyClient(addr, roots, "other.example").Get("https://example.com:" + p + "/"); err == nil {
		t.Fatal("a ClientHello for another name went through")
	}
	r := onlyRecord(t, stop())
	if r.Admitted || !strings.Contains(r.Reason, `TLS server name "other.example" is not the CONNECT host example.com`) || r.Up != 0 || r.Down != 0 {
		t.Fatalf("record %+v", r)
	}
}

func TestConnectWithoutTLSIsRefused(t *testing.T) {
	var got atomic.Int64
	p := tcpServer(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		got.Add(n)
	})
	res := &mapResolver{names: map[string][]string{"a.claw.test": {"127.0.0.1"}}}
	addr, stop := startProxy(t, Config{Hosts: []string{"a.claw.test:" + p}, AllowPrivate: loopback, Resolver: res})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "CONNECT a.claw.test:"+p+" HTTP/1.1\r\n\r\nSSH-2.0-OpenSSH_9.2\r\nsome data\r\n")
	io.Copy(io.Discard, c) // the proxy closes it
	c.Close()
	r := onlyRecord(t, stop())
	if r.Admitted || !strings.Contains(r.Reason, "does not start with a TLS ClientHello") || got.Load() != 0 {
		t.Fatalf("record %+v, %d bytes reached the server", r, got.Load())
	}
}

func TestByteCap(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) }))
	defer srv.Close()
	p := port(t, srv.Listener.Addr().String())
	res := &mapResolver{names: map[string][]string{"a.claw.test": {"127.0.0.1"}}}
	addr, stop := startProxy(t, Config{Hosts: []string{"a.claw.test:" + p}, AllowPrivate: loopback, Resolver: res, MaxBytes: 64 << 10})
	resp, err := proxyClient(addr, nil, "").Get("http://a.claw.test:" + p + "/")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(body) >= len(big) {
			t.Fatalf("the whole body (%d bytes) went through a 64 KiB cap", len(body))
		}
	}
	r := onlyRecord(t, stop())
	if r.Close != "cap" || r.Up+r.Down > 64<<10 {
		t.Fatalf("record %+v: want close=cap within 64 KiB", r)
	}
}

func TestIdleTimeout(t *testing.T) {
	p := tcpServer(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // reads the request, never answers
	res := &mapResolver{names: map[string][]string{"a.claw.test": {"127.0.0.1"}}}
	addr, stop := startProxy(t, Config{Hosts: []string{"a.claw.test:" + p}, AllowPrivate: loopback, Resolver: res, IdleTimeout: 200 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET http://a.claw.test:"+p+"/ HTTP/1.1\r\nHost: a.claw.test:"+p+"\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("the proxy did not close the idle connection: %v", err)
	}
	r := onlyRecord(t, stop())
	if !r.Admitted || r.Close != "idle" {
		t.Fatalf("record %+v: want close=idle", r)
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	pt := tcpServer(t, func(c net.Conn) { io.Copy(c, c) })
	res := &mapResolver{names: map[string][]string{"a.claw.test": {"127.0.0.1"}}}
	addr, px := startProxyP(t, Config{Hosts: []string{"a.claw.test:" + pt}, AllowPrivate: loopback, Resolver: res})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST http://a.claw.test:"+pt+"/ HTTP/1.1\r\nHost: a.claw.test:"+pt+"\r\n\r\n")
	br := bufio.NewReader(c)
	if _, err := br.ReadString('\n'); err != nil { // the echo of the request line
		t.Fatal(err)
	}
	r := onlyRecord(t, px.Close())
	if r.Close != "end" || !r.Admitted {
		t.Fatalf("record %+v: want close=end", r)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("the tunnel stayed open after Close: %v", err)
	}
}

func TestConnectionCap(t *testing.T) {
	pt := tcpServer(t, func(c net.Conn) { io.Copy(c, c) })
	res := &mapResolver{names: map[string][]string{"a.claw.test": {"127.0.0.1"}}}
	addr, px := startProxyP(t, Config{Hosts: []string{"a.claw.test:" + pt}, AllowPrivate: loopback, Resolver: res, MaxConns: 1})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST http://a.claw.test:"+pt+"/ HTTP/1.1\r\nHost: a.claw.test:"+pt+"\r\n\r\n")
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	status, _ := rawRequest(t, addr, "GET http://a.claw.test:"+pt+"/ HTTP/1.1\r\nHost: a.claw.test:"+pt+"\r\n\r\n")
	if status != "403 claw egress: more than 1 connections at once" {
		t.Fatalf("status %q", status)
	}
	px.Close()
}

func TestHeaderLimits(t *testing.T) {
	addr, stop := startProxy(t, Config{Hosts: []string{"a.claw.test:80"}, HeaderTimeout: 200 * time.Millisecond, MaxHeaderBytes: 1024})
	status, _ := rawRequest(t, addr, "GET http://a.claw.test/ HTTP/1.1\r\nX: "+strings.Repeat("a", 2000)+"\r\n\r\n")
	if !strings.HasPrefix(status, "431 ") {
		t.Errorf("oversized head: %q", status)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET http://a.claw.test/ HTTP/1.1\r\n") // and nothing more
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("slow head: %v %v", resp, err)
	}
	rep := stop()
	if len(rep.Conns) != 2 || !strings.Contains(rep.Conns[0].Reason+rep.Conns[1].Reason, "timeout") {
		t.Fatalf("records %+v", rep.Conns)
	}
}

func TestParseCIDR(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "127.0.0.0/8", want: "127.0.0.0/8"},
		{in: "10.1.2.3", want: "10.1.2.3/32"},
		{in: "fd00::/8", want: "fd00::/8"},
		{in: "10.1.2.3/8", err: `"10.1.2.3/8" has bits set after the prefix length; write "10.0.0.0/8"`},
		{in: "0.0.0.0/0", err: `"0.0.0.0/0" opens every address; list the private ranges you need`},
		{in: "localhost", err: `"localhost" is not a CIDR prefix like "10.0.0.0/8" or an address`},
	} {
		p, err := ParseCIDR(tc.in)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: error %v, want %s", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || p.String() != tc.want):
			t.Errorf("%s: %v %v, want %s", tc.in, p, err, tc.want)
		}
	}
}
