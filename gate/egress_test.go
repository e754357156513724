package gate

import (
	"context"
	"slices"
	"strconv"
	"testing"
)

func TestShellDestinations(t *testing.T) {
	for _, tc := range []struct {
		command string
		want    []string // host:port of each destination, "!" + error when unusable
	}{
		{"curl -sS https://Example.COM./x", []string{"example.com:443"}},
		{"curl -sS http://localhost:8080/x && wget -qO- http://a.example/y", []string{"localhost:8080", "a.example:80"}},
		{"git clone https://github.com/o/r && pip download --index-url=https://pypi.org/simple x", []string{"github.com:443", "pypi.org:443"}},
		{"curl http://[::1]:9/ http://2130706433/", []string{"::1:9", "2130706433:80"}},
		{"bash -c 'curl -s https://api.example.com'", []string{"api.example.com:443"}},
		{"curl http://example.com:99999/", []string{"!invalid port \"99999\""}},
		{"echo https://example.com", nil}, // not a network client
		{"ls -la", nil},
		{"curl ftp://example.com/", nil},
	} {
		in := BuildInput(shellAction(tc.command), testContext("full"))
		var got []string
		for _, d := range in.Destinations {
			if d.Error != "" {
				got = append(got, "!"+d.Error)
				continue
			}
			got = append(got, d.Host+":"+strconv.Itoa(d.Port))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: destinations %q, want %q", tc.command, got, tc.want)
		}
	}
}

// TestEgressPlan: the decision plans each allowed destination as a
// host:port for the proxy, and denies one off allowed_domains or a
// non-public one allow_private_cidrs does not open.
func TestEgressPlan(t *testing.T) {
	e := newTestEngine(t, Policy{AllowedDomains: []string{"example.com", "localhost"}, AllowPrivateCIDRs: []string{"127.0.0.0/8"}}, "")
	for _, tc := range []struct {
		command, decision string
		egress            []string
		rule              string
	}{
		{"curl -sS https://example.com/x", Allow, []string{"example.com:443"}, ""},
		{"curl -sS http://localhost:8080/x", Allow, []string{"localhost:8080"}, ""},
		{"curl -sS http://127.0.0.1:8080/x", Deny, nil, "net.domain_not_allowed"},
		{"curl -sS https://evil.example/x", Deny, nil, "net.domain_not_allowed"},
		{"curl -sS http://169.254.169.254/", Deny, nil, "net.private_address"},
		{"ls", Allow, nil, ""},
	} {
		d, err := e.Decide(context.Background(), shellAction(tc.command), testContext("full"))
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision != tc.decision || (tc.rule != "" && !slices.Contains(d.RuleIDs(), tc.rule)) {
			t.Errorf("%s: %s %v, want %s with %s", tc.command, d.Decision, d.RuleIDs(), tc.decision, tc.rule)
		}
		if tc.decision == Allow && !slices.Equal(d.Sandbox.Network.Hosts, tc.egress) {
			t.Errorf("%s: egress %q, want %q", tc.command, d.Sandbox.Network.Hosts, tc.egress)
		}
	}
}
