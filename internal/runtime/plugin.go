package runtime

import (
	"fmt"
	"strings"

	"github.com/clawsec/claw/internal/textesc"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/plugin"
)

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
