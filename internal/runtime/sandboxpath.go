package runtime

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/clawsec/claw/executor"
)

// sandboxPath builds the PATH of sandboxed shell actions, and the
// directories to grant read-only for it (README, "How PATH is built").
//
// The candidates are list ([sandbox] path) or, when it is empty, envPath
// (the PATH claw was started with), then the system directories of
// [executor.DefaultPath]. A candidate is kept canonical (symlinks
// resolved) when it is absolute (a relative one would be looked up in the
// workspace) and an existing directory that no forbidden path covers, and
// only once. Directories inside the workspace ws, which actions may write,
// are moved after the system directories, so nothing an action writes
// shadows a system command.
//
// Each kept directory outside the workspace is granted read (and execute),
// never write. A directory named bin grants its parent instead (the
// toolchain around it: a GOROOT, a venv, a Node prefix), unless that parent
// is / or the user's home, or holds a forbidden path (~/.cargo holds
// credentials): then only bin itself.
func sandboxPath(list []string, envPath, ws, userHome string, forbidden ForbiddenPaths) (dirs, read []string) {
	if len(list) == 0 {
		list = filepath.SplitList(envPath)
	}
	system := filepath.SplitList(executor.DefaultPath)
	if h, err := filepath.EvalSymlinks(userHome); err == nil {
		userHome = h
	}
	var inWorkspace []string
	for _, d := range slices.Concat(list, system) {
		if !filepath.IsAbs(d) {
			continue
		}
		d, err := filepath.EvalSymlinks(filepath.Clean(d))
		if err != nil {
			continue
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || forbidden.Covering(d) != "" ||
			slices.Contains(dirs, d) || slices.Contains(inWorkspace, d) {
			continue
		}
		if pathWithin(d, ws) {
			inWorkspace = append(inWorkspace, d)
			continue
		}
		dirs = append(dirs, d)
		if g := toolchainGrant(d, ws, userHome, forbidden); g != "" && !slices.Contains(read, g) {
			read = append(read, g)
		}
	}
	return append(dirs, inWorkspace...), read
}

// systemRoots are the executor's read-only system directories that hold
// commands: every action reads them already.
var systemRoots = []string{"/usr", "/bin", "/sbin"}

// toolchainGrant is the directory to grant read for the PATH directory d
// (outside the workspace): "" in the system directories, the parent of a
// bin directory when granting it grants nothing forbidden, the user's
// home or the workspace, else d itself.
func toolchainGrant(d, ws, userHome string, forbidden ForbiddenPaths) string {
	if slices.ContainsFunc(systemRoots, func(r string) bool { return pathWithin(d, r) }) {
		return ""
	}
	parent := filepath.Dir(d)
	if filepath.Base(d) == "bin" && parent != "/" && parent != userHome && !pathWithin(ws, parent) &&
		forbidden.Covering(parent) == "" && forbidden.Within(parent) == "" {
		return parent
	}
	return d
}
