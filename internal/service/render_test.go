package service

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		golden string
	}{
		{name: "dynamic user", opts: Options{Binary: "/usr/local/bin/claw"}, golden: "dynamic.service"},
		{name: "dedicated user outside var lib", opts: Options{
			Binary: "/usr/bin/claw", User: "claw", Home: "/srv/claw", Workspace: "/srv/work",
			ReadWritePaths: []string{"/srv/cache"}, Watchdog: time.Minute, MemoryDenyWriteExecute: true,
		}, golden: "dedicated.service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("unit differs from %s (run with -update):\n%s", path, got)
			}
		})
	}
}

func TestRenderRejects(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{name: "no binary", opts: Options{}},
		{name: "relative binary", opts: Options{Binary: "claw"}},
		{name: "unclean binary", opts: Options{Binary: "/usr/bin/../bin/claw"}},
		{name: "space in binary", opts: Options{Binary: "/opt/my claw/claw"}},
		{name: "specifier", opts: Options{Binary: "/opt/%n/claw"}},
		{name: "newline injects a directive", opts: Options{Binary: "/usr/bin/claw\nExecStartPre=/bin/sh"}},
		{name: "variable", opts: Options{Binary: "/usr/bin/claw", Home: "/var/lib/$X"}},
		{name: "root home", opts: Options{Binary: "/usr/bin/claw", Home: "/"}},
		{name: "root user", opts: Options{Binary: "/usr/bin/claw", User: "root"}},
		{name: "bad user", opts: Options{Binary: "/usr/bin/claw", User: "a b"}},
		{name: "group without user", opts: Options{Binary: "/usr/bin/claw", Group: "claw"}},
		{name: "dynamic user outside var lib", opts: Options{Binary: "/usr/bin/claw", Home: "/srv/claw"}},
		{name: "fractional watchdog", opts: Options{Binary: "/usr/bin/claw", Watchdog: 1500 * time.Millisecond}},
		{name: "relative rw path", opts: Options{Binary: "/usr/bin/claw", ReadWritePaths: []string{"data"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Render(tt.opts); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("Render = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func TestParseExposure(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    float64
		wantErr bool
	}{
		{name: "ok", out: "✓ UMask= …\n\n→ Overall exposure level for claw.service: 1.9 OK 🙂\n", want: 1.9},
		{name: "integer", out: "→ Overall exposure level for x.service: 9 UNSAFE 😨\n", want: 9},
		{name: "missing", out: "Failed to open claw.service: No such file\n", wantErr: true},
		{name: "out of range", out: "Overall exposure level for x.service: 11.0 UNSAFE\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseExposure([]byte(tt.out))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseExposure = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// requireAnalyzer skips without systemd-analyze, except where the sandbox
// (and so this check) is required.
func requireAnalyzer(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		if os.Getenv("CLAW_REQUIRE_SANDBOX") != "" {
			t.Fatal("systemd-analyze is required (CLAW_REQUIRE_SANDBOX is set): run scripts/deps.sh")
		}
		t.Skip("systemd-analyze not installed (scripts/deps.sh installs it)")
	}
}

// TestExposure holds the unit to systemd's own hardening score.
func TestExposure(t *testing.T) {
	requireAnalyzer(t)
	tests := []struct {
		name string
		opts Options
	}{
		{name: "dynamic user", opts: Options{Binary: "/usr/local/bin/claw"}},
		{name: "dedicated user", opts: Options{Binary: "/usr/bin/claw", User: "claw", Home: "/srv/claw"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit, err := Render(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			res, err := Install(dir, unit, false)
			if err != nil {
				t.Fatal(err)
			}
			score, out, err := Analyze(context.Background(), res.Path)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Logf("exposure %.1f", score)
			if score > MaxExposure {
				t.Errorf("exposure %.1f > %.1f:\n%s", score, MaxExposure, failing(out))
			}
		})
	}
}

// failing keeps the ✗ lines of a systemd-analyze report.
func failing(out []byte) string {
	var b strings.Builder
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "✗") || strings.Contains(l, "Overall") {
			b.WriteString(strings.TrimRight(l, " ") + "\n")
		}
	}
	return b.String()
}

func TestHiddenFrom(t *testing.T) {
	for path, want := range map[string]string{
		"/usr/local/bin/claw":  "",
		"/opt/claw/bin/claw":   "",
		"/tmpfoo/claw":         "",
		"/tmp/build/claw":      "PrivateTmp=yes",
		"/var/tmp/claw":        "PrivateTmp=yes",
		"/home/u/src/bin/claw": "ProtectHome=yes",
		"/root/claw":           "ProtectHome=yes",
		"/run/user/1000/claw":  "ProtectHome=yes",
		"/homework/bin/claw":   "",
	} {
		if got := HiddenFrom(path); got != want {
			t.Errorf("HiddenFrom(%q) = %q, want %q", path, got, want)
		}
	}
}
