package gate

import (
	"strings"

	"github.com/clawsec/claw/gate/shell"
)

// urlClients are the programs whose http(s) URL arguments are network
// destinations.
var urlClients = map[string]bool{"curl": true, "wget": true, "git": true, "pip": true, "pip3": true,
	"npm": true, "yarn": true, "pnpm": true, "http": true, "https": true, "aria2c": true}

// shellDestinations are the network destinations of a shell command
// that are known statically: every http:// or https:// URL among the
// arguments of a network client (curl URL, wget URL, git clone URL, pip
// --index-url=URL, npm --registry=URL), analysed like the http tool's URL. The policies
// refuse a destination off allowed_domains, and plan each of the others
// as a host:port the egress proxy admits. A destination written another
// way (a host in an option, a URL in a variable) is not found here; it
// is refused by the proxy at run time, since it is not in the plan.
func shellDestinations(a *shell.Analysis) []*URLInfo {
	if a == nil {
		return nil
	}
	var out []*URLInfo
	seen := map[string]bool{}
	for _, c := range a.Commands {
		if !urlClients[c.Name] {
			continue
		}
		for i, arg := range c.Argv {
			if i == 0 || seen[arg] {
				continue
			}
			if _, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(arg, "--") {
				arg = v // --index-url=https://…
			}
			l := strings.ToLower(arg)
			if !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") {
				continue
			}
			seen[arg] = true
			out = append(out, AnalyzeURL(arg))
		}
	}
	return out
}
