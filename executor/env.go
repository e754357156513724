package executor

import (
	"os"
	"strings"
)

// DefaultPath is the sandbox's PATH.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// buildEnv makes the child's environment from the allowlist: never the
// parent's secrets, only what is listed here or in the Spec.
func buildEnv(s *Spec, home string) []string {
	env := map[string]string{
		"PATH":   DefaultPath,
		"HOME":   home,
		"TMPDIR": home,
		"TERM":   "dumb",
		"LANG":   "C.UTF-8",
	}
	for _, k := range []string{"LANG", "LC_ALL", "TZ"} {
		if v, ok := os.LookupEnv(k); ok && v != "" {
			env[k] = v
		}
	}
	for _, e := range s.Env {
		name, val, set := strings.Cut(e, "=")
		if !set {
			v, ok := os.LookupEnv(name)
			if !ok {
				continue
			}
			val = v
		}
		env[name] = val
	}
	for _, e := range s.Secrets {
		name, val, _ := strings.Cut(e, "=")
		env[name] = val
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
