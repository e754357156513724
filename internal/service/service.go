package service

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
	"time"
)

// UnitName is the name of the unit [Install] writes.
const UnitName = "claw.service"

// Defaults of [Options].
const (
	DefaultUnitDir  = "/etc/systemd/system"
	DefaultHome     = "/var/lib/claw"
	DefaultWatchdog = 30 * time.Second
)

// ExecutorNamespaces are the namespace types claw's executor creates for
// each sandboxed action (user, PID, mount, IPC, UTS and, without a network
// grant or with the egress proxy's, network). RestrictNamespaces allows
// these and no other. The cgroup namespace, which would only hide claw's
// own cgroup paths, stays forbidden: it would cost the unit a tenth of
// systemd's exposure score, over MaxExposure; under the unit actions run
// without it.
const ExecutorNamespaces = "user mnt net pid ipc uts"

// ExecutorSyscalls are the system calls the executor's child needs to
// confine itself that systemd's @system-service group lacks: Landlock,
// seccomp, the mount calls that remount its private view read-only and
// mount a fresh /proc inside its own user and mount namespaces, and the
// calls that name its own UTS namespace (they change only that namespace:
// the service has no capability over the host's).
var ExecutorSyscalls = []string{
	"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
	"seccomp", "mount", "mount_setattr", "umount2", "sethostname", "setdomainname",
}

// Options describe the unit. The zero value of every field but Binary
// means its default.
type Options struct {
	// Binary is the absolute path of the claw executable ExecStart runs.
	Binary string
	// User runs the service as an existing (system) user; empty means
	// DynamicUser=yes, a transient uid allocated by systemd. Group
	// defaults to User.
	User, Group string
	// Home is CLAW_HOME for the service (default /var/lib/claw). Under
	// /var/lib it is the unit's StateDirectory (created and handed to the
	// service user by systemd); elsewhere it is a ReadWritePaths entry
	// and must belong to User (DynamicUser cannot own it).
	Home string
	// Workspace is the agent's workspace (default Home/workspace). Outside
	// Home it is added to ReadWritePaths.
	Workspace string
	// ReadWritePaths are further paths the service may write
	// (ProtectSystem=strict makes everything else read-only).
	ReadWritePaths []string
	// Watchdog is WatchdogSec (default 30s); claw serve pings at half.
	Watchdog time.Duration
	// MemoryDenyWriteExecute adds MemoryDenyWriteExecute=yes. claw is
	// fine with it, but every command the agent runs inherits it, and
	// JIT runtimes (node, java, some python builds) then die.
	MemoryDenyWriteExecute bool
}

//go:embed unit.tmpl
var unitTemplate string

var unitTmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("unit").Parse(unitTemplate)) })

type unitData struct {
	Name, Binary, User, Group, Home, StateDirectory string
	ReadWritePaths                                  []string
	WatchdogSec, Namespaces, ExtraSyscalls          string
	MemoryDenyWriteExecute                          bool
}

// withDefaults fills the defaults in.
func (o Options) withDefaults() Options {
	if o.Home == "" {
		o.Home = DefaultHome
	}
	if o.Workspace == "" {
		o.Workspace = filepath.Join(o.Home, "workspace")
	}
	if o.Group == "" {
		o.Group = o.User
	}
	if o.Watchdog == 0 {
		o.Watchdog = DefaultWatchdog
	}
	return o
}

// Resolved returns o with its defaults filled in.
func (o Options) Resolved() Options { return o.withDefaults() }

// ErrInvalidOptions is wrapped by the errors of [Render] for options that
// cannot make a safe unit.
var ErrInvalidOptions = errors.New("invalid service options")

// Render returns the unit file for o.
func Render(o Options) ([]byte, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	d := unitData{
		Name: UnitName, Binary: o.Binary, User: o.User, Group: o.Group, Home: o.Home,
		WatchdogSec:            fmt.Sprintf("%ds", int(o.Watchdog/time.Second)),
		Namespaces:             ExecutorNamespaces,
		ExtraSyscalls:          strings.Join(ExecutorSyscalls, " "),
		MemoryDenyWriteExecute: o.MemoryDenyWriteExecute,
	}
	if rel, ok := stateDirectory(o.Home); ok {
		d.StateDirectory = rel
	} else {
		d.ReadWritePaths = append(d.ReadWritePaths, o.Home)
	}
	if !within(o.Workspace, o.Home) {
		d.ReadWritePaths = append(d.ReadWritePaths, o.Workspace)
	}
	d.ReadWritePaths = append(d.ReadWritePaths, o.ReadWritePaths...)
	var b bytes.Buffer
	if err := unitTmpl().Execute(&b, d); err != nil {
		return nil, fmt.Errorf("rendering the unit: %w", err)
	}
	return b.Bytes(), nil
}

// hiddenBy are the directories the unit hides from the service, and the
// setting that hides each.
var hiddenBy = []struct{ dir, setting string }{
	{"/home", "ProtectHome=yes"},
	{"/root", "ProtectHome=yes"},
	{"/run/user", "ProtectHome=yes"},
	{"/tmp", "PrivateTmp=yes"},
	{"/var/tmp", "PrivateTmp=yes"},
}

// HiddenFrom returns the unit setting that hides path from the service
// (the service sees an empty directory there), or "".
func HiddenFrom(path string) string {
	for _, h := range hiddenBy {
		if within(path, h.dir) {
			return h.setting
		}
	}
	return ""
}

// stateDirectory returns home relative to /var/lib when it is below it.
func stateDirectory(home string) (string, bool) {
	rel, err := filepath.Rel("/var/lib", home)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return rel, true
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func (o Options) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidOptions, fmt.Sprintf(format, args...))
	}
	if o.Binary == "" {
		return bad("no claw binary")
	}
	paths := map[string]string{"binary": o.Binary, "home": o.Home, "workspace": o.Workspace}
	for i, p := range o.ReadWritePaths {
		paths[fmt.Sprintf("read-write path %d", i+1)] = p
	}
	for what, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return bad("%s %q is not a clean absolute path", what, p)
		}
		if p == "/" {
			return bad("%s cannot be /", what)
		}
		if err := unitSafe(p); err != nil {
			return bad("%s %q: %v", what, p, err)
		}
	}
	if o.User == "" && o.Group != "" {
		return bad("a group needs a user")
	}
	for what, n := range map[string]string{"user": o.User, "group": o.Group} {
		if n != "" && !validName(n) {
			return bad("%s %q is not a valid user or group name", what, n)
		}
	}
	if o.User == "root" || o.User == "0" {
		return bad("the service must not run as root")
	}
	if _, ok := stateDirectory(o.Home); !ok && o.User == "" {
		return bad("home %q is outside /var/lib: DynamicUser cannot own it; give a user", o.Home)
	}
	if o.Watchdog < time.Second || o.Watchdog%time.Second != 0 {
		return bad("watchdog %v must be whole seconds, at least 1s", o.Watchdog)
	}
	return nil
}

// unitSafe refuses characters that mean something in a unit file value
// (specifiers, quoting, variables, line breaks), so a path is never
// reinterpreted by systemd.
func unitSafe(s string) error {
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return errors.New("control character")
		case strings.ContainsRune(" \t%$\"'\\;", r):
			return fmt.Errorf("unsupported character %q", r)
		}
	}
	return nil
}

// validName follows the portable user name rule systemd accepts:
// [a-zA-Z_][a-zA-Z0-9_-]*, at most 31 characters.
func validName(n string) bool {
	if len(n) == 0 || len(n) > 31 {
		return false
	}
	for i, r := range n {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' ||
			i > 0 && (r == '-' || r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
