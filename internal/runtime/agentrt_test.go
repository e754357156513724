package runtime

import (
	"testing"
	"time"

	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/internal/config"
)

// With the [agent] timeouts unset, shell gets 15 s, http 20 s and every
// other tool 30 s; ask_user waits as long as an approval (120 s). A
// --timeout replaces all of them but ask_user's. Fails if a default
// changes, if shell or http fall back to tool_timeout, or if a tool is left
// out of the map (it would get the [sandbox] timeout instead).
func TestToolTimeouts(t *testing.T) {
	cfg := config.Default(t.TempDir())
	for _, tt := range []struct {
		name               string
		flag               time.Duration
		shell, http, other time.Duration
	}{
		{name: "defaults", shell: 15 * time.Second, http: 20 * time.Second, other: 30 * time.Second},
		{name: "--timeout", flag: time.Second, shell: time.Second, http: time.Second, other: time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := toolTimeouts(cfg, tt.flag)
			for _, name := range tool.Names() {
				want := tt.other
				switch name {
				case "shell":
					want = tt.shell
				case "http":
					want = tt.http
				case "ask_user":
					want = 120 * time.Second
				case "delegate": // the whole sub-agent turn
					want = defaultDelegateTimeout
					if tt.flag > 0 {
						want = tt.flag
					}
				}
				if got[name] != want {
					t.Errorf("%s: %v, want %v", name, got[name], want)
				}
			}
			if len(got) != len(tool.Names()) {
				t.Errorf("%d timeouts for %d tools: %v", len(got), len(tool.Names()), got)
			}
		})
	}
}

// TestChannelAutonomy: a channel's section sets its autonomy; --autonomy
// may lower it and never raise it.
func TestChannelAutonomy(t *testing.T) {
	for _, c := range []struct {
		daemon, section string
		flag            bool
		want            string
	}{
		{"supervised", "", false, "supervised"},
		{"supervised", "readonly", false, "readonly"},
		{"supervised", "full", false, "full"},
		{"readonly", "full", true, "readonly"},
		{"full", "readonly", true, "readonly"},
		{"supervised", "full", true, "supervised"},
	} {
		if got := channelAutonomy(c.daemon, c.section, c.flag); got != c.want {
			t.Errorf("channelAutonomy(%q, %q, %v) = %q, want %q", c.daemon, c.section, c.flag, got, c.want)
		}
	}
}
