package runtime

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/config"
)

// TestForbiddenPathsAgreeWithGate: the forbidden-path matcher doctor, init
// and the sandbox PATH use names a path exactly when the gate denies
// reading it as forbidden (path.forbidden).
func TestForbiddenPathsAgreeWithGate(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	claw := filepath.Join(home, ".claw")
	cfg := config.Default(claw)
	if err := cfg.Expand(func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	e := &Env{Home: claw, Config: cfg, UserDir: home}
	ctx := context.Background()
	eng, err := NewEngine(ctx, e, Policy(cfg))
	if err != nil {
		t.Fatal(err)
	}
	f, err := newForbiddenPaths(eng)
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(home, "claw-workspace")
	for _, p := range []string{
		"/root", "/root/claw-workspace", "/rootfs/x", "/etc/shadow-", "/etc/passwd", "/proc/1/environ", "/proc/1/status",
		"/var/run/docker.sock", "/srv/x/docker.sock", "/srv/claw/workspace", "/usr/local/go/bin", "/tmp/x",
		home + "/.ssh", home + "/.ssh/id_rsa", home + "/.sshx", home + "/.cargo/bin", home + "/.cargo/credentials.toml",
		home + "/.local/bin", claw, claw + "/keys/receipt.key", ws, ws + "/notes.txt",
	} {
		d, err := eng.Decide(ctx, gate.Action{Tool: "file_read", Args: map[string]any{"path": p}},
			gate.Context{Autonomy: "full", Workspace: ws, Cwd: ws, Home: home, Channel: "test"})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		gateSays := slices.Contains(d.RuleIDs(), "path.forbidden")
		if got := f.Covering(p); (got != "") != gateSays {
			t.Errorf("%s: matcher names %q, gate's rules %v", p, got, d.RuleIDs())
		}
	}
}
