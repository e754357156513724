package service

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/clawsec/claw/internal/config"
	"github.com/pelletier/go-toml/v2"
)

// Config returns the config.toml for the service's home: claw's commented
// template with workspace_dir set to workspace and [sandbox] run_as
// emptied. The service runs as an unprivileged user with no capabilities,
// so sandboxed actions run as that same user: switching to another one is
// neither possible nor needed.
func Config(workspace string) ([]byte, error) {
	tmpl := config.Template()
	line, err := toml.Marshal(struct {
		W string `toml:"workspace_dir"`
	}{workspace})
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", workspace, err)
	}
	for _, r := range []struct{ old, new []byte }{
		{[]byte("workspace_dir = \"~/claw-workspace\"\n"), line},
		{[]byte("run_as = \"nobody\"\n"), []byte("# The service's own user runs sandboxed actions (docs/service.md).\nrun_as = \"\"\n")},
	} {
		if bytes.Count(tmpl, r.old) != 1 {
			return nil, errors.New("config template changed: cannot set " + string(bytes.Fields(r.old)[0]))
		}
		tmpl = bytes.Replace(tmpl, r.old, r.new, 1)
	}
	return tmpl, nil
}
