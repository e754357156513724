package broker

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
)

// specFor builds the executor Spec the broker would run a for, with the
// decision the rig's gate makes.
func specFor(t *testing.T, r *rig, a gate.Action) (executor.Spec, error) {
	t.Helper()
	in := gate.BuildInput(a, gate.Context{Autonomy: "full", Workspace: r.ws, Cwd: r.ws, Home: r.b.cfg.Home, Channel: "test"})
	d, err := r.b.cfg.Gate.DecideInput(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	return r.b.spec(a, in, d)
}

// run_as applies only when claw runs as root: the executor refuses to
// switch users for anyone else, so a non-root claw with the default
// run_as = "nobody" could run nothing.
func TestSpecRunAs(t *testing.T) {
	r := newRigWith(t, "full", nil, func(c *Config) { c.Sandbox.RunAs = "nobody" })
	real := ""
	if os.Geteuid() == 0 {
		real = "nobody"
	}
	for _, tc := range []struct {
		name    string
		euid    func() int
		runAs   string
		wantRun string
	}{
		{name: "root", euid: func() int { return 0 }, runAs: "nobody", wantRun: "nobody"},
		{name: "not root", euid: func() int { return 1000 }, runAs: "nobody", wantRun: ""},
		{name: "root without run_as", euid: func() int { return 0 }, runAs: "", wantRun: ""},
		{name: "this process", euid: os.Geteuid, runAs: "nobody", wantRun: real},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(f func() int) { geteuid = f }(geteuid)
			geteuid = tc.euid
			r.b.cfg.Sandbox.RunAs = tc.runAs
			for _, a := range []gate.Action{sh("ls"), {Tool: "file_read", Args: map[string]any{"path": "f.txt"}}} {
				s, err := specFor(t, r, a)
				if err != nil {
					t.Fatalf("%s: %v", a.Tool, err)
				}
				if s.RunAs != tc.wantRun {
					t.Errorf("%s: RunAs %q, want %q", a.Tool, s.RunAs, tc.wantRun)
				}
			}
		})
	}
}

// The http tool gets the gate's allowed_domains as its host allowlist, and
// no argument of the model's can widen it.
func TestSpecHTTPAllowlist(t *testing.T) {
	domains := []string{"api.example.com", "*.example.org"}
	r := newRigWith(t, "full", func(p *gate.Policy) { p.AllowedDomains = domains }, nil)
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{name: "plain", args: map[string]any{"url": "https://api.example.com/v1"}},
		{name: "model allowlist", args: map[string]any{"url": "https://api.example.com/v1", "allow_hosts": []any{"*"}}},
		{name: "model switches in other spellings", args: map[string]any{
			"url": "https://api.example.com/v1", "ALLOW_HOSTS": []any{"*"}, "Allow_Private": true,
			"allow_ſchemes": []any{"file"}, "allow_schemes": []any{"gopher"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := specFor(t, r, gate.Action{Tool: "http", Args: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			if s.Tool != executor.ToolHTTP || !s.Net.On() {
				t.Fatalf("spec %+v", s)
			}
			var got map[string]any
			if err := json.Unmarshal(s.Args, &got); err != nil {
				t.Fatal(err)
			}
			for k := range got {
				if k != "allow_hosts" && strings.HasPrefix(strings.ToLower(k), "allow_") {
					t.Errorf("the model's %s reached the tool: %s", k, s.Args)
				}
			}
			var hosts []string
			if b, _ := json.Marshal(got["allow_hosts"]); json.Unmarshal(b, &hosts) != nil || !slices.Equal(hosts, domains) {
				t.Errorf("allow_hosts %v, want %v (args %s)", got["allow_hosts"], domains, s.Args)
			}
			if got["url"] != "https://api.example.com/v1" {
				t.Errorf("url %v", got["url"])
			}
		})
	}
}

// With no allowed_domains there is no allowlist to give the tool (to which
// an empty one means any host): the spec is refused, whatever the gate said.
func TestSpecHTTPNoDomains(t *testing.T) {
	r := newRigWith(t, "full", nil, nil)
	a := gate.Action{Tool: "http", Args: map[string]any{"url": "https://api.example.com/", "allow_hosts": []any{"*"}}}
	in := gate.BuildInput(a, gate.Context{Autonomy: "full", Workspace: r.ws, Cwd: r.ws})
	_, err := r.b.spec(a, in, gate.Decision{Decision: gate.Allow})
	if !errors.Is(err, executor.ErrInvalidSpec) {
		t.Fatalf("spec without allowed_domains: %v", err)
	}
}

// A shell action whose decision plans egress runs with exactly those
// destinations through the proxy, with the config's private ranges; one
// without gets no network at all.
func TestSpecEgress(t *testing.T) {
	r := newRigWith(t, "full", func(p *gate.Policy) {
		p.AllowedDomains = []string{"example.com", "localhost"}
		p.AllowPrivateCIDRs = []string{"127.0.0.0/8"}
	}, nil)
	s, err := specFor(t, r, sh("curl -sS https://example.com/a http://localhost:8080/b"))
	if err != nil {
		t.Fatal(err)
	}
	e := s.Net.Egress
	if e == nil || !slices.Equal(e.Hosts, []string{"example.com:443", "localhost:8080"}) || !slices.Equal(e.AllowPrivate, []string{"127.0.0.0/8"}) || s.Net.On() {
		t.Fatalf("net %+v egress %+v", s.Net, e)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err = specFor(t, r, sh("ls"))
	if err != nil || s.Net.Egress != nil || s.Net.On() {
		t.Fatalf("ls: net %+v, %v", s.Net, err)
	}
}

// The outcome receipt's egress record is the executor's report, with the
// host and the reason passed through the redactor.
func TestEgressReceipt(t *testing.T) {
	if egressReceipt(nil, strings.ToUpper) != nil {
		t.Fatal("a record without an egress report")
	}
	rep := &executor.EgressReport{Dropped: 2, Conns: []executor.EgressConn{
		{Method: "CONNECT", Host: "example.com", Port: 443, IP: "93.184.215.14", Admitted: true, Up: 10, Down: 20, MS: 3, Close: "eof"},
		{Method: "GET", Host: "evil.example", Port: 80, Reason: "evil.example:80 is not in this action's plan"},
	}}
	got, _ := json.Marshal(egressReceipt(rep, strings.ToUpper))
	want := `{"conns":[{"method":"CONNECT","host":"EXAMPLE.COM","port":443,"ip":"93.184.215.14","admitted":true,"bytes_up":10,"bytes_down":20,"ms":3,"close":"eof"},` +
		`{"method":"GET","host":"EVIL.EXAMPLE","port":80,"admitted":false,"reason":"EVIL.EXAMPLE:80 IS NOT IN THIS ACTION'S PLAN","bytes_up":0,"bytes_down":0,"ms":0}],"dropped":2}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// The sandbox PATH and the read grants of its toolchains go to shell
// actions only, after the decision's own grants.
func TestSpecPath(t *testing.T) {
	r := newRigWith(t, "full", nil, func(c *Config) {
		c.Sandbox.Path = []string{"/opt/go/bin", "/usr/bin"}
		c.Sandbox.PathRead = []string{"/opt/go"}
	})
	s, err := specFor(t, r, sh("go version"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Env, []string{"PATH=/opt/go/bin:/usr/bin"}) {
		t.Errorf("shell env %q, want the PATH", s.Env)
	}
	if len(s.Read) < 2 || s.Read[len(s.Read)-1] != "/opt/go" || !slices.Contains(s.Read, r.ws) {
		t.Errorf("shell read %q, want the plan's grants and then /opt/go", s.Read)
	}
	f, err := specFor(t, r, gate.Action{Tool: "file_read", Args: map[string]any{"path": "f.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Env) != 0 || slices.Contains(f.Read, "/opt/go") {
		t.Errorf("file_read env %q read %q: the PATH is for shell actions only", f.Env, f.Read)
	}
}
