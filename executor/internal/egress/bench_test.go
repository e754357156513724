package egress

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// The proxy's added latency per connection, measured side by side with
// its anchor: one new connection and one request each, on loopback,
// straight to the server and through the proxy (which resolves the name,
// vets the address, dials it, and for CONNECT checks the ClientHello).

func benchServers(b *testing.B) (plain, secure *httptest.Server, roots *x509.CertPool, proxyAddr string) {
	b.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	plain, secure = httptest.NewServer(h), httptest.NewTLSServer(h)
	b.Cleanup(plain.Close)
	b.Cleanup(secure.Close)
	roots = x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	_, pp, _ := net.SplitHostPort(plain.Listener.Addr().String())
	_, sp, _ := net.SplitHostPort(secure.Listener.Addr().String())
	p, err := New(Config{Hosts: []string{"a.claw.test:" + pp, "example.com:" + sp}, AllowPrivate: loopback,
		Resolver: &mapResolver{names: map[string][]string{"a.claw.test": {"127.0.0.1"}, "example.com": {"127.0.0.1"}}}})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(l)
	b.Cleanup(func() { p.Close() })
	return plain, secure, roots, l.Addr().String()
}

// get sends one request on a new connection to addr and reads the whole
// answer.
func get(b *testing.B, addr, target, host string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// paired times one direct connection and one through the proxy per
// iteration, alternating, so that both see the same machine, and reports
// the medians of each and of the added time per pair.
func paired(b *testing.B, direct, proxied func()) {
	var d, p, added []float64
	for b.Loop() {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		proxied()
		t2 := time.Now()
		d, p = append(d, float64(t1.Sub(t0))), append(p, float64(t2.Sub(t1)))
		added = append(added, float64(t2.Sub(t1)-t1.Sub(t0)))
	}
	b.ReportMetric(median(d)/1e3, "direct-µs")
	b.ReportMetric(median(p)/1e3, "proxy-µs")
	b.ReportMetric(median(added)/1e3, "added-µs")
	b.ReportMetric(0, "ns/op")
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

func BenchmarkEgressHTTP(b *testing.B) {
	plain, _, _, proxy := benchServers(b)
	addr := plain.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	paired(b, func() { get(b, addr, "/x", "a.claw.test:"+port) },
		func() { get(b, proxy, "http://a.claw.test:"+port+"/x", "a.claw.test:"+port) })
}

func BenchmarkEgressTLS(b *testing.B) {
	_, secure, roots, proxy := benchServers(b)
	addr := secure.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	conf := &tls.Config{RootCAs: roots, ServerName: "example.com"}
	request := func(c net.Conn) {
		tc := tls.Client(c, conf)
		io.WriteString(tc, "GET /x HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		tc.Close()
	}
	dial := func(a string) net.Conn {
		c, err := net.Dial("tcp", a)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	paired(b, func() { request(dial(addr)) }, func() {
		c := dial(proxy)
		io.WriteString(c, "CONNECT example.com:"+port+" HTTP/1.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "CONNECT"})
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("CONNECT: %v %v", resp, err)
		}
		request(c)
	})
}
