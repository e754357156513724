package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestChannelSnippets parses every TOML block of the channel docs that
// holds a [channels.…] section, so the configs users copy stay valid.
func TestChannelSnippets(t *testing.T) {
	block := regexp.MustCompile("(?s)```toml\n(.*?)```")
	n := 0
	for _, f := range []string{"README.md", "docs/channels.md", "docs/bridge.md", "docs/planckclaw.md", "docs/discord.md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllSubmatch(data, -1) {
			if !strings.Contains(string(m[1]), "[channels.") {
				continue
			}
			n++
			if _, err := Parse(m[1], f, "/home/u/.claw"); err != nil {
				t.Errorf("%s: snippet\n%s\ndoes not parse: %v", f, m[1], err)
			}
		}
	}
	if n < 6 {
		t.Errorf("found %d channel snippets, want at least 6", n)
	}
}
