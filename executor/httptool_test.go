package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/executor/internal/child"
	"github.com/clawsec/claw/executor/internal/httptool"
	"golang.org/x/sys/unix"
)

// The http tool matches hosts as the gate matches allowed_domains
// (policies/network.rego): exact hosts, "*.example.com" for subdomains
// only, "*" for any host.
func TestHostAllowed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		host  string
		allow []string
		want  bool
	}{
		{name: "exact", host: "api.example.com", allow: []string{"api.example.com"}, want: true},
		{name: "exact is not a suffix", host: "evil-api.example.com", allow: []string{"api.example.com"}, want: false},
		{name: "exact is not a subdomain", host: "x.api.example.com", allow: []string{"api.example.com"}, want: false},
		{name: "case and trailing dot", host: "API.Example.COM.", allow: []string{"api.example.com."}, want: true},
		{name: "wildcard subdomain", host: "a.example.com", allow: []string{"*.example.com"}, want: true},
		{name: "wildcard deep subdomain", host: "a.b.example.com", allow: []string{"*.example.com"}, want: true},
		{name: "wildcard is not the domain", host: "example.com", allow: []string{"*.example.com"}, want: false},
		{name: "wildcard is not a suffix", host: "evilexample.com", allow: []string{"*.example.com"}, want: false},
		{name: "wildcard other domain", host: "example.com.evil.net", allow: []string{"*.example.com"}, want: false},
		{name: "star", host: "anything.net", allow: []string{"*"}, want: true},
		{name: "star needs a host", host: "", allow: []string{"*"}, want: false},
		{name: "leading dot is not a wildcard", host: "a.example.com", allow: []string{".example.com"}, want: false},
		{name: "star in the middle is literal", host: "a.b.com", allow: []string{"a.*.com"}, want: false},
		{name: "second entry", host: "b.org", allow: []string{"a.org", "b.org"}, want: true},
		{name: "empty list", host: "a.org", allow: nil, want: false},
		{name: "ip literal", host: "93.184.215.14", allow: []string{"93.184.215.14"}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := httptool.HostAllowed(tc.host, tc.allow); got != tc.want {
				t.Errorf("HostAllowed(%q, %q) = %v, want %v", tc.host, tc.allow, got, tc.want)
			}
		})
	}
}

// HTTPArgs sets the allowlist and drops every policy argument of the
// request, in every spelling the tool's decoder accepts (it matches field
// names case-insensitively, with Unicode folding).
func TestHTTPArgs(t *testing.T) {
	allow := []string{"api.example.com", "*.example.org"}
	for _, tc := range []struct {
		name    string
		request map[string]any
	}{
		{name: "request only", request: map[string]any{"url": "https://api.example.com/"}},
		{name: "policy arguments", request: map[string]any{"url": "https://api.example.com/", "allow_hosts": []string{"*"}, "allow_private": true, "allow_schemes": []string{"file"}}},
		{name: "other spellings", request: map[string]any{"url": "https://api.example.com/", "ALLOW_HOSTS": []string{"*"}, "Allow_Private": true, "allow_ſchemes": []string{"file"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := HTTPArgs(tc.request, allow)
			if err != nil {
				t.Fatal(err)
			}
			var got httptool.HTTPArgs
			if err := child.StrictJSON(raw, &got); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			want := httptool.HTTPArgs{URL: "https://api.example.com/", AllowHosts: allow}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("args %s decode to %+v, want %+v", raw, got, want)
			}
		})
	}
	if _, err := HTTPArgs(map[string]any{"url": "https://api.example.com/"}, nil); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("empty allowlist: %v", err)
	}
	// every allow_ argument of the tool is policy, so HTTPArgs drops it
	typ := reflect.TypeFor[httptool.HTTPArgs]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if strings.HasPrefix(name, "allow_") && !slices.Contains(httpPolicyArgs, name) {
			t.Errorf("http tool argument %s is not among the policy arguments HTTPArgs drops", name)
		}
	}
}

// A redirect from a host on the allowlist to one that is not is refused
// before anything is sent to it.
func TestHTTPToolRedirectOffAllowlist(t *testing.T) {
	requireSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/off":
			http.Redirect(w, r, fmt.Sprintf("http://localhost:%d/landed", port), http.StatusFound)
		case "/on":
			http.Redirect(w, r, "/landed", http.StatusFound)
		default:
			fmt.Fprintf(w, "reached %s via %s", r.URL.Path, r.Host)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, tc := range []struct {
		name      string
		path      string
		allow     []string
		wantBody  string
		wantError string
	}{
		{name: "redirect on the list", path: "/on", allow: []string{"127.0.0.1"}, wantBody: "reached /landed via " + ln.Addr().String()},
		{name: "redirect off the list", path: "/off", allow: []string{"127.0.0.1"}, wantError: `host "localhost" is not in the allowlist`},
		{name: "wildcard does not cover the domain", path: "/off", allow: []string{"127.0.0.1", "*.localhost"}, wantError: `host "localhost" is not in the allowlist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := HTTPArgs(map[string]any{"url": base + tc.path}, tc.allow)
			must(t, err)
			// the test server is on loopback: the tool's own switch for
			// private addresses, which HTTPArgs never sets
			var args map[string]any
			must(t, json.Unmarshal(raw, &args))
			args["allow_private"] = true
			raw, _ = json.Marshal(args)
			res := run(t, Spec{Tool: ToolHTTP, Args: raw, Net: Net{Ports: []uint16{uint16(port)}}})
			if res.Tool == nil {
				t.Fatalf("no tool result: %+v %q", res, res.Stderr)
			}
			if tc.wantError != "" {
				if !strings.Contains(res.Tool.Error, tc.wantError) {
					t.Fatalf("error %q, want %q", res.Tool.Error, tc.wantError)
				}
				return
			}
			var out httptool.HTTPResult
			if res.Tool.Error != "" || json.Unmarshal(res.Tool.Payload, &out) != nil || out.Body != tc.wantBody {
				t.Fatalf("result %+v %s, want body %q", res.Tool, res.Tool.Payload, tc.wantBody)
			}
		})
	}
}

// TestNetGrantSockets is the escape suite for an action with a network
// grant of one TCP port: that port is reachable and nothing else is, but
// UDP to port 53 (name resolution), and below Landlock ABI 10 UDP to any
// port, which neither Landlock nor seccomp can tell apart there (see the
// README's "Network").
func TestNetGrantSockets(t *testing.T) {
	requireSandbox(t)
	granted, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { granted.Close() })
	other, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { other.Close() })
	accepted := make(chan string, 16)
	go accept(granted, accepted, "granted")
	go accept(other, accepted, "other")
	unixPath := filepath.Join(t.TempDir(), "agent.sock")
	ul, err := net.Listen("unix", unixPath)
	must(t, err)
	t.Cleanup(func() { ul.Close() })
	go accept(ul, accepted, "unix")
	port := granted.Addr().(*net.TCPAddr).Port
	grantedAddr := granted.Addr().String()

	udpOther := "denied"
	if Check().LandlockABI < 10 {
		udpOther = "allowed"
	}
	sys := func(what string, n ...int) []string {
		args := []string{what}
		for _, v := range n {
			args = append(args, strconv.Itoa(v))
		}
		return sysprobeArgv(t, args...)
	}
	for _, tc := range []struct {
		name     string
		argv     []string
		want     string // "allowed", "denied" or "denied ERRNO"
		accepted string // the listener that must have accepted, if any
	}{
		{name: "tcp to the granted port", argv: probeArgv("tcp", grantedAddr), want: "allowed", accepted: "granted"},
		{name: "tcp to another port", argv: probeArgv("tcp", other.Addr().String()), want: "denied EACCES"},
		{name: "raw socket", argv: probeArgv("raw"), want: "denied EPROTONOSUPPORT"},
		{name: "mptcp to the granted port", argv: probeArgv("mptcp", grantedAddr), want: "denied EPROTONOSUPPORT"},
		// TCP and UDP only: the kernel itself may refuse some of these
		// (SCTP without its module, ICMP datagrams outside
		// net.ipv4.ping_group_range, with EACCES); TestSeccompFilterDecisions
		// checks the filter's own answer
		{name: "udplite socket", argv: sys("socket", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_UDPLITE), want: "denied EPROTONOSUPPORT"},
		{name: "udplite6 socket", argv: sys("socket", unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDPLITE), want: "denied EPROTONOSUPPORT"},
		{name: "sctp socket", argv: sys("socket", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP), want: "denied EPROTONOSUPPORT"},
		{name: "sctp seqpacket socket", argv: sys("socket", unix.AF_INET6, unix.SOCK_SEQPACKET, unix.IPPROTO_SCTP), want: "denied EPROTONOSUPPORT"},
		{name: "icmp datagram socket", argv: sys("socket", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP), want: "denied EPROTONOSUPPORT"},
		{name: "icmpv6 datagram socket", argv: sys("socket", unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_ICMPV6), want: "denied EPROTONOSUPPORT"},
		{name: "dccp socket", argv: sys("socket", unix.AF_INET, unix.SOCK_DCCP, unix.IPPROTO_DCCP), want: "denied EPROTONOSUPPORT"},
		{name: "tcp6 socket", argv: sys("socket", unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP), want: "allowed"},
		{name: "udp socket", argv: sys("socket", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_UDP), want: "allowed"},
		{name: "unix socket", argv: probeArgv("unix", unixPath), want: "denied EAFNOSUPPORT"},
		{name: "netlink raw socket", argv: probeArgv("netlink"), want: "denied"},
		{name: "netlink datagram socket", argv: perlSocket(unix.AF_NETLINK, unix.SOCK_DGRAM), want: "denied " + strconv.Itoa(int(unix.EAFNOSUPPORT))},
		{name: "unix datagram socket", argv: perlSocket(unix.AF_UNIX, unix.SOCK_DGRAM), want: "denied " + strconv.Itoa(int(unix.EAFNOSUPPORT))},
		{name: "listen", argv: probeArgv("listen"), want: "denied"},
		{name: "udp to port 53", argv: probeArgv("udp", "127.0.0.1:53"), want: "allowed"},
		{name: "udp to another port", argv: probeArgv("udp", "127.0.0.1:9"), want: udpOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.argv[0]); err != nil {
				t.Skip(err)
			}
			res := run(t, Spec{Argv: tc.argv, Read: []string{testBin}, Net: Net{Ports: []uint16{uint16(port)}}})
			out := string(bytes.TrimSpace(res.Stdout))
			if out != tc.want && !(tc.want == "denied" && strings.HasPrefix(out, "denied ")) {
				t.Errorf("got %q, want %q (stderr %q)", out, tc.want, res.Stderr)
			}
			var got string
			if tc.accepted != "" {
				select {
				case got = <-accepted:
				case <-time.After(5 * time.Second):
				}
			} else {
				select {
				case got = <-accepted:
				default:
				}
			}
			if got != tc.accepted {
				t.Errorf("listener that accepted: %q, want %q", got, tc.accepted)
			}
		})
	}
}

// perlSocket is a probe for the socket types the probe program does not
// make: it prints "allowed" or "denied ERRNO" (the errno's number).
func perlSocket(family, typ int) []string {
	return []string{"/usr/bin/perl", "-e", fmt.Sprintf(`if (socket(my $s, %d, %d, 0)) { print "allowed\n" } else { printf "denied %%d\n", $!+0 }`, family, typ)}
}
