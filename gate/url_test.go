package gate

import (
	"net/netip"
	"testing"

	"github.com/clawsec/claw/internal/netclass"
)

type netipAddr = netip.Addr

func TestAnalyzeURL(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		wantClass string
		wantIP    string
		wantHost  string
		wantErr   bool
		wantUser  bool
		wantPort  int
	}{
		{name: "public https", raw: "https://example.com/x", wantClass: "public", wantHost: "example.com", wantPort: 443},
		{name: "uppercase and trailing dot", raw: "http://EXAMPLE.com./", wantClass: "public", wantHost: "example.com", wantPort: 80},
		{name: "explicit port", raw: "https://example.com:8443/", wantClass: "public", wantPort: 8443},
		{name: "loopback dotted", raw: "http://127.0.0.1/", wantClass: "loopback", wantIP: "127.0.0.1"},
		{name: "loopback short", raw: "http://127.1/", wantClass: "loopback", wantIP: "127.0.0.1"},
		{name: "loopback decimal", raw: "http://2130706433/", wantClass: "loopback", wantIP: "127.0.0.1"},
		{name: "loopback hex", raw: "http://0x7f000001/", wantClass: "loopback", wantIP: "127.0.0.1"},
		{name: "loopback octal", raw: "http://0177.0.0.1/", wantClass: "loopback", wantIP: "127.0.0.1"},
		{name: "loopback mixed", raw: "http://0x7f.0.0.01/", wantClass: "loopback", wantIP: "127.0.0.1"},
		{name: "ipv6 loopback", raw: "http://[::1]/", wantClass: "loopback", wantIP: "::1"},
		{name: "ipv4 mapped", raw: "http://[::ffff:127.0.0.1]/", wantClass: "loopback", wantIP: "127.0.0.1"},
		{name: "ipv4 mapped hex", raw: "http://[::ffff:7f00:1]/", wantClass: "loopback", wantIP: "127.0.0.1"},
		{name: "metadata", raw: "http://169.254.169.254/latest/meta-data/", wantClass: "metadata", wantIP: "169.254.169.254"},
		{name: "metadata decimal", raw: "http://2852039166/", wantClass: "metadata", wantIP: "169.254.169.254"},
		{name: "metadata name", raw: "http://metadata.google.internal/", wantClass: "metadata"},
		{name: "link local", raw: "http://169.254.1.1/", wantClass: "link_local"},
		{name: "ipv6 link local zone", raw: "http://[fe80::1%25eth0]/", wantClass: "link_local", wantIP: "fe80::1"},
		{name: "private 10", raw: "http://10.0.0.1/", wantClass: "private"},
		{name: "private 172", raw: "http://172.16.5.4/", wantClass: "private"},
		{name: "private 192", raw: "http://192.168.1.1/", wantClass: "private"},
		{name: "cgnat", raw: "http://100.64.0.1/", wantClass: "private"},
		{name: "ula", raw: "http://[fd12::1]/", wantClass: "private"},
		{name: "unspecified", raw: "http://0.0.0.0/", wantClass: "unspecified"},
		{name: "zero short", raw: "http://0/", wantClass: "unspecified"},
		{name: "localhost", raw: "http://localhost:8080/", wantClass: "loopback"},
		{name: "sub localhost", raw: "http://a.localhost/", wantClass: "loopback"},
		{name: "single label", raw: "http://intranet/", wantClass: "private"},
		{name: "nat64", raw: "http://[64:ff9b::7f00:1]/", wantClass: "reserved"},
		{name: "numeric last label", raw: "http://foo.123/", wantClass: "invalid"},
		{name: "idn spoof", raw: "http://exаmple.com/", wantClass: "invalid"},
		{name: "userinfo", raw: "https://example.com@evil.com/", wantClass: "public", wantHost: "evil.com", wantUser: true},
		{name: "file scheme", raw: "file:///etc/passwd", wantClass: "invalid"},
		{name: "gopher scheme", raw: "gopher://127.0.0.1:25/", wantClass: "invalid"},
		{name: "no host", raw: "http:///x", wantErr: true},
		{name: "backslash", raw: "http://example.com\\@evil.com/", wantErr: true},
		{name: "space", raw: "http://exa mple.com/", wantErr: true},
		{name: "bad port", raw: "http://example.com:99999/", wantErr: true},
		{name: "opaque", raw: "http:a@b.c", wantErr: true},
		{name: "overflow octet", raw: "http://256.0.0.1/", wantClass: "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := AnalyzeURL(tt.raw)
			if (u.Error != "") != tt.wantErr {
				t.Fatalf("AnalyzeURL(%q).Error = %q, wantErr %v", tt.raw, u.Error, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if u.Class != tt.wantClass {
				t.Errorf("class = %q, want %q (ip %q host %q)", u.Class, tt.wantClass, u.IP, u.Host)
			}
			if tt.wantIP != "" && u.IP != tt.wantIP {
				t.Errorf("ip = %q, want %q", u.IP, tt.wantIP)
			}
			if tt.wantHost != "" && u.Host != tt.wantHost {
				t.Errorf("host = %q, want %q", u.Host, tt.wantHost)
			}
			if u.Userinfo != tt.wantUser {
				t.Errorf("userinfo = %v, want %v", u.Userinfo, tt.wantUser)
			}
			if tt.wantPort != 0 && u.Port != tt.wantPort {
				t.Errorf("port = %d, want %d", u.Port, tt.wantPort)
			}
		})
	}
}

func FuzzAnalyzeURL(f *testing.F) {
	for _, s := range []string{"http://127.1/", "https://[::ffff:127.0.0.1]:8/", "http://0x7f.1/", "file:///x", "http://a@b/", "http://%zz/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u := AnalyzeURL(raw)
		if u.Error == "" && u.Class == "" {
			t.Fatalf("AnalyzeURL(%q): no class and no error", raw)
		}
		if u.Class == "public" && u.IP != "" {
			if c := netclass.Class(mustAddr(t, u.IP)); c != "public" {
				t.Fatalf("inconsistent class for %q", raw)
			}
		}
	})
}

func mustAddr(t *testing.T, s string) (a netipAddr) {
	t.Helper()
	a, ok := parseIPAnyNotation(s)
	if !ok {
		t.Fatalf("reparse %q failed", s)
	}
	return a
}
