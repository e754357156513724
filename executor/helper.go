package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/clawsec/claw/executor/internal/child"
	_ "github.com/clawsec/claw/executor/internal/httptool" // the http tool runs in this program
	"github.com/clawsec/claw/internal/toolkind"
)

// HelperName is the file name of the small sandbox helper binary that is
// installed next to claw. When it is present the executor starts it instead
// of re-executing the (much larger) claw binary.
const HelperName = "claw-sandbox"

// Entry points of the child (argv[1]); a program that calls [AllowSelfExec]
// must dispatch them to [ChildMain] and [ToolMain].
const (
	ChildEntry = child.EntrySandbox
	ToolEntry  = child.EntryTool
)

var helperState struct {
	sync.Mutex
	explicit string
	self     bool
}

// SetHelper makes the executor start the helper binary at path (built from
// executor/cmd/claw-sandbox). An empty path restores the default lookup.
func SetHelper(path string) {
	helperState.Lock()
	defer helperState.Unlock()
	helperState.explicit = path
}

// AllowSelfExec declares that this program dispatches [ChildEntry] to
// [ChildMain] and [ToolEntry] to [ToolMain] (cmd/claw does), so the
// executor may re-execute it when no helper binary is installed.
func AllowSelfExec() {
	helperState.Lock()
	defer helperState.Unlock()
	helperState.self = true
}

// ChildMain is the sandboxed child's entry point. It confines the process
// and executes the command, or returns 126/127 when it could not.
func ChildMain(args []string) int { return child.Main(args) }

// ToolMain runs an in-sandbox tool; it is what a tool action executes
// inside the sandbox.
func ToolMain(args []string) int { return child.ToolMain(args) }

// EnterChild runs the entry point args[1] names ([ChildEntry] or
// [ToolEntry]) with the arguments after it and returns its exit code; ok
// is false when args name neither. A program that calls [AllowSelfExec]
// (a test binary, say) calls it first thing:
//
//	if code, ok := executor.EnterChild(os.Args); ok {
//		os.Exit(code)
//	}
func EnterChild(args []string) (code int, ok bool) {
	if len(args) < 2 {
		return 0, false
	}
	switch args[1] {
	case ChildEntry:
		return ChildMain(args[2:]), true
	case ToolEntry:
		return ToolMain(args[2:]), true
	}
	return 0, false
}

// launcher is how the child is started: the program and its argv[0].
type launcher struct {
	path  string
	argv0 string
	self  bool // the program is claw itself
}

func findHelper() (launcher, error) {
	helperState.Lock()
	explicit, self := helperState.explicit, helperState.self
	helperState.Unlock()
	if explicit != "" {
		if err := checkHelper(explicit); err != nil {
			return launcher{}, err
		}
		return launcher{path: explicit, argv0: HelperName}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return launcher{}, fmt.Errorf("cannot find own executable: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return launcher{}, fmt.Errorf("cannot find own executable: %w", err)
	}
	next := filepath.Join(filepath.Dir(exe), HelperName)
	if checkHelper(next) == nil {
		return launcher{path: next, argv0: HelperName}, nil
	}
	if self {
		return launcher{path: exe, argv0: os.Args[0], self: true}, nil
	}
	return launcher{}, fmt.Errorf("%w: no %s helper next to %s", ErrUnavailable, HelperName, exe)
}

// checkHelper refuses a helper that others could have replaced.
func checkHelper(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("sandbox helper %s is not an executable file", p)
	}
	if fi.Mode()&0o022 != 0 {
		return fmt.Errorf("sandbox helper %s is writable by group or others", p)
	}
	return nil
}

// toolLauncher is the program a tool runs as inside the sandbox: the helper
// has the file tools; the http tool (net/http, TLS) only exists in the
// program that embeds the executor, which must then allow self-exec.
func toolLauncher(l launcher, tool toolkind.Kind) (launcher, error) {
	if tool != ToolHTTP || l.self {
		return l, nil
	}
	helperState.Lock()
	self := helperState.self
	helperState.Unlock()
	if !self {
		return launcher{}, fmt.Errorf("%w: the %s tool runs in the program that embeds the executor, which has not called AllowSelfExec", ErrUnavailable, tool)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return launcher{}, fmt.Errorf("cannot find own executable: %w", err)
	}
	return launcher{path: exe, argv0: os.Args[0], self: true}, nil
}
