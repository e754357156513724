package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawsec/claw/internal/textesc"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/plugin"
)

// PluginStore is the plugins directory of the claw home.
func PluginStore(home string) plugin.Store {
	return plugin.Store{Dir: filepath.Join(home, "plugins")}
}

// PluginRunAsProblem says why the plugin tools of e's claw home cannot
// run, and how to fix it: root runs them as the run_as user, who must be
// able to search the claw home. Both are "" when they can.
func PluginRunAsProblem(e *Env) (problem, fix string) {
	runAs := e.Config.Sandbox.RunAs
	if os.Geteuid() != 0 || runAs == "" {
		return "", ""
	}
	if fi, err := os.Stat(e.Home); err == nil && fi.Mode().Perm()&0o001 != 0 {
		return "", ""
	}
	return fmt.Sprintf("plugin tools run as %s, who cannot search the claw home %s", runAs, e.Home),
		"set [sandbox] run_as = \"\" (uid 0 without capabilities, still confined by Landlock and seccomp) to run them"
}

// PluginList lists the installed plugins of s (never nil) and counts
// those changed since they were installed.
func PluginList(s plugin.Store) (list []plugin.Installed, changed int, err error) {
	list, err = s.List()
	if err != nil {
		return nil, 0, WithCode(ExitError, fmt.Errorf("reading the plugins: %w", err))
	}
	for _, p := range list {
		if p.Status != plugin.StatusOK {
			changed++
		}
	}
	if list == nil {
		list = []plugin.Installed{}
	}
	return list, changed, nil
}

// PluginResolver gives the broker the plugin tools of the store.
func PluginResolver(s plugin.Store) broker.PluginResolver {
	return func(name, tool string, args map[string]any) broker.PluginCall {
		c := s.Resolve(name, tool, args)
		return broker.PluginCall{
			Info: gate.PluginInfo{Status: c.Status, Detail: c.Detail},
			Dir:  c.Dir, Argv: c.Argv,
			Read: c.Reach.Read, Write: c.Reach.Write, Hosts: c.Reach.Hosts,
			Timeout: c.Tool.TimeoutDuration(),
			Digest:  c.Digest,
		}
	}
}

// maxPluginCatalog bounds the plugin catalog in the plugin tool's
// description.
const maxPluginCatalog = 16 << 10

// PluginCatalog lists the installed, unchanged plugin tools of the store
// with their schemas, for the model's plugin tool description; "" when
// there are none.
func PluginCatalog(s plugin.Store) string {
	list, _ := s.List()
	var b strings.Builder
	for _, p := range list {
		if p.Status != plugin.StatusOK {
			continue
		}
		for _, t := range p.Manifest.Tools {
			fmt.Fprintf(&b, "\n- plugin %q, tool %q: %s Arguments schema: %s", p.Name, t.Name, t.Description, t.SchemaJSON())
		}
	}
	catalog := b.String()
	if len(catalog) > maxPluginCatalog {
		catalog = textesc.Prefix(catalog, maxPluginCatalog) + "\n(more plugin tools are installed than fit here)"
	}
	return catalog
}

// PluginTools are the installed, unchanged plugin tools for claw tool list.
func PluginTools(s plugin.Store) (names, descs []string) {
	list, _ := s.List()
	for _, p := range list {
		if p.Status != plugin.StatusOK {
			continue
		}
		for _, t := range p.Manifest.Tools {
			names = append(names, p.Name+"/"+t.Name)
			descs = append(descs, t.Description)
		}
	}
	return names, descs
}
