package egress

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
)

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		head      string
		authority string // "" when refused
		path      string
	}{
		{"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", "example.com:443", ""},
		{"CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", "[2001:db8::1]:443", ""},
		{"CONNECT Example.COM.:443 HTTP/1.1\n\n", "example.com:443", ""},
		{"GET http://example.com/a?b=c HTTP/1.1\r\nHost: example.com\r\n\r\n", "example.com:80", "/a?b=c"},
		{"GET http://example.com?b HTTP/1.0\r\n\r\n", "example.com:80", "/?b"},
		{"GET HTTP://example.com:8080 HTTP/1.1\r\nhost: EXAMPLE.com:8080\r\n\r\n", "example.com:8080", "/"},
		{"POST http://example.com/%2e%2e/x HTTP/1.1\r\nHost: example.com:80\r\n\r\n", "example.com:80", "/%2e%2e/x"},
		{"CONNECT example.com HTTP/1.1\r\n\r\n", "", ""},          // missing port
		{"CONNECT example.com: HTTP/1.1\r\n\r\n", "", ""},         // empty port
		{"CONNECT example.com:0 HTTP/1.1\r\n\r\n", "", ""},        // port 0
		{"CONNECT example.com:+443 HTTP/1.1\r\n\r\n", "", ""},     // signed port
		{"CONNECT example.com:65536 HTTP/1.1\r\n\r\n", "", ""},    // port too large
		{"CONNECT ::1:443 HTTP/1.1\r\n\r\n", "", ""},              // unbracketed IPv6
		{"CONNECT [fe80::1%eth0]:443 HTTP/1.1\r\n\r\n", "", ""},   // zone
		{"CONNECT [127.0.0.1]:443 HTTP/1.1\r\n\r\n", "", ""},      // bracketed IPv4
		{"CONNECT user@example.com:443 HTTP/1.1\r\n\r\n", "", ""}, // userinfo
		{"CONNECT exämple.com:443 HTTP/1.1\r\n\r\n", "", ""},      // non-ASCII
		{"CONNECT 0x7f000001:443 HTTP/1.1\r\n\r\n", "", ""},       // hex address
		{"CONNECT 017700000001:443 HTTP/1.1\r\n\r\n", "", ""},     // octal address
		{"CONNECT a..b:443 HTTP/1.1\r\n\r\n", "", ""},             // empty label
		{"GET http://example.com/ HTTP/1.1\r\n\r\n", "", ""},      // no Host
		{"GET http://example.com/ HTTP/1.1\r\nHost: a\r\nHost: example.com\r\n\r\n", "", ""},
		{"GET http://example.com:80/ HTTP/1.1\r\nHost: example.com:81\r\n\r\n", "", ""},
		{"GET http://example.com/#frag HTTP/1.1\r\nHost: example.com\r\n\r\n", "", ""},
		{"GET http://example.com\\@evil.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", "", ""},
		{"GET https://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", "", ""},
		{"GET ftp://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", "", ""},
		{"GET http://example.com/ HTTP/2\r\nHost: example.com\r\n\r\n", "", ""},
		{"GET  http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", "", ""},
		{"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n folded\r\n\r\n", "", ""},
		{"GET http://example.com/ HTTP/1.1\r\nHost: example.com\rX: y\r\n\r\n", "", ""},
		{"GET http://example.com/ HTTP/1.1\r\nBad Name: x\r\nHost: example.com\r\n\r\n", "", ""},
		{"CONNECT example.com:443 HTTP/1.1\r\n", "", ""}, // no empty line
	} {
		r, err := parseRequest([]byte(tc.head))
		switch {
		case tc.authority == "" && err == nil:
			t.Errorf("%q: accepted as %s", tc.head, r.authority())
		case tc.authority != "" && err != nil:
			t.Errorf("%q: %v", tc.head, err)
		case tc.authority != "" && (r.authority() != tc.authority || r.path != tc.path):
			t.Errorf("%q: %s %q, want %s %q", tc.head, r.authority(), r.path, tc.authority, tc.path)
		}
	}
}

// FuzzParseRequest checks the parser's invariants on any head: an
// accepted request names one canonical destination that the allowlist's
// own canonicalisation maps to itself, its host can hold no byte that
// would change its meaning downstream, a plain request's forwarded head
// is one well-formed request for the same destination, and a refusal
// carries an HTTP status.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		"CONNECT [::ffff:169.254.169.254]:80 HTTP/1.1\r\n\r\n",
		"GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\nConnection: keep-alive, X-A\r\nX-A: 1\r\n\r\n",
		"GET http://2130706433/ HTTP/1.0\r\n\r\n",
		"POST http://Example.com.:8080/x HTTP/1.1\r\nHost: example.com:8080\r\nProxy-Authorization: x\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		r, err := parseRequest(head)
		if err != nil {
			se, ok := err.(*statusError)
			if !ok || se.code < 400 || se.code > 499 || se.msg == "" {
				t.Fatalf("refusal %v is not a 4xx with a reason", err)
			}
			return
		}
		if r.port == 0 || r.host == "" || r.host != strings.ToLower(r.host) || strings.HasSuffix(r.host, ".") {
			t.Fatalf("non-canonical destination %q:%d", r.host, r.port)
		}
		if strings.ContainsAny(r.host, "@/\\?#[] \t\r\n%") {
			t.Fatalf("host %q holds a delimiter", r.host)
		}
		if a, perr := netip.ParseAddr(r.host); perr == nil {
			if !r.ip.IsValid() || a != r.ip || a.Is4In6() {
				t.Fatalf("host %q is an address but ip is %v", r.host, r.ip)
			}
		} else if r.ip.IsValid() {
			t.Fatalf("ip %v for the name %q", r.ip, r.host)
		}
		key, err := CanonicalHostPort(r.authority())
		if err != nil || key != r.authority() {
			t.Fatalf("authority %q canonicalises to %q, %v", r.authority(), key, err)
		}
		if r.connect {
			if r.method != "CONNECT" || len(r.headers) != 0 {
				t.Fatalf("CONNECT request %+v", r)
			}
			return
		}
		if !strings.HasPrefix(r.path, "/") || strings.ContainsAny(r.path, " \r\n#") {
			t.Fatalf("path %q", r.path)
		}
		fwd := forwardHead(r)
		if !bytes.HasSuffix(fwd, []byte("Connection: close\r\n\r\n")) || bytes.Count(fwd, []byte("\r\n\r\n")) != 1 {
			t.Fatalf("forwarded head %q", fwd)
		}
		if bytes.Contains(bytes.ToLower(fwd), []byte("\nproxy-")) {
			t.Fatalf("forwarded head keeps a Proxy- header: %q", fwd)
		}
		// the forwarded head, in absolute form again, is the same request
		abs := bytes.Replace(fwd, []byte(" "+r.path+" "), []byte(" http://"+r.authority()+r.path+" "), 1)
		again, err := parseRequest(abs)
		if err != nil || again.authority() != r.authority() || again.path != r.path || again.method != r.method {
			t.Fatalf("forwarded head %q parses as %+v, %v", abs, again, err)
		}
	})
}
