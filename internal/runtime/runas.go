package runtime

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// When claw runs as root, sandboxed actions run as the [sandbox] run_as user
// (default "nobody"), so the workspace must belong to that user for actions
// to write in it, and every directory above it must be searchable by them.

// RootWorkspace is the workspace claw init names for a claw that runs as
// root and hands its actions to run_as, when that user cannot reach
// ~/claw-workspace (root's home is 0700) or it lies in a forbidden path
// (/root is one). Every root claw home whose workspace falls back to it
// shares it.
var RootWorkspace = "/srv/claw/workspace" // a variable for the tests

// RunAsIDs resolves the run_as user, or ok=false when actions keep claw's
// own uid (claw is not root, or run_as is empty).
func RunAsIDs(runAs string) (uid, gid int, ok bool, err error) {
	if os.Geteuid() != 0 || runAs == "" {
		return 0, 0, false, nil
	}
	u, err := user.Lookup(runAs)
	if err != nil {
		if u, err = user.LookupId(runAs); err != nil {
			return 0, 0, false, fmt.Errorf("run_as user %q: %w", runAs, err)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, true, nil
}

// HandWorkspaceToRunAs gives a workspace claw init just created to the
// run_as user, with mode 0700.
func HandWorkspaceToRunAs(ws, runAs string) error {
	uid, gid, ok, err := RunAsIDs(runAs)
	if err != nil || !ok {
		return err
	}
	if err := os.Chown(ws, uid, gid); err != nil {
		return fmt.Errorf("giving the workspace to %s: %w", runAs, err)
	}
	return nil
}

// UnsearchableAbove returns the first directory above path (from the
// nearest up) that uid and gid may not search, or "".
func UnsearchableAbove(path string, uid, gid int) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && !mayAccess(fi, uid, gid, 0o1) {
			return dir
		}
		if dir == "/" || dir == "." {
			return ""
		}
	}
}

// mayAccess reports whether uid and gid (without capabilities) get the
// access bits want (r=4, w=2, x=1) on a file by its mode.
func mayAccess(fi os.FileInfo, uid, gid int, want os.FileMode) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case int(st.Uid) == uid:
		return perm>>6&want == want
	case int(st.Gid) == gid:
		return perm>>3&want == want
	}
	return perm&want == want
}

// WorkspaceProblem says why sandboxed actions, running as the run_as user
// because claw runs as root, cannot use the workspace ws, and how to fix
// it; "" when they can (or actions keep claw's own uid).
func WorkspaceProblem(ws, runAs string) (problem, fix string) {
	uid, gid, ok, err := RunAsIDs(runAs)
	if err != nil {
		return err.Error(), "set [sandbox] run_as to an existing user"
	}
	if !ok {
		return "", ""
	}
	if dir := UnsearchableAbove(ws, uid, gid); dir != "" {
		return fmt.Sprintf("sandboxed actions run as %s (uid %d) because claw runs as root, and %s (above the workspace %s) is not searchable by them: file tools will fail", runAs, uid, dir, ws),
			fmt.Sprintf("use a workspace outside it, such as %s ('claw init --workspace %s' in a new claw home, or workspace_dir in the config), or set [sandbox] run_as = \"\"", RootWorkspace, RootWorkspace)
	}
	fi, err := os.Stat(ws)
	if err != nil || mayAccess(fi, uid, gid, 0o3) {
		return "", ""
	}
	return fmt.Sprintf("sandboxed actions run as %s (uid %d) because claw runs as root, and they cannot write in the workspace %s", runAs, uid, ws),
		fmt.Sprintf("chown -R %s %s, or set [sandbox] run_as = \"\" to keep uid 0 without capabilities", runAs, ws)
}

// ProgramsProblem says why sandboxed tools, once switched to the run_as
// user because claw runs as root, could not start the program they run
// as: claw itself (the http tool always, the file tools when no
// claw-sandbox helper is installed beside claw) or the helper. "" when
// run_as can reach and execute both (or actions keep claw's own uid).
func ProgramsProblem(runAs, helper string) (problem, fix string) {
	uid, gid, ok, err := RunAsIDs(runAs)
	if err != nil || !ok {
		return "", ""
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", ""
	}
	fix = fmt.Sprintf("install claw and claw-sandbox where %s can reach them, such as /usr/local/bin, or set [sandbox] run_as = \"\"", runAs)
	for _, p := range []string{exe, helper} {
		if p == "" {
			continue
		}
		if dir := UnsearchableAbove(p, uid, gid); dir != "" {
			return fmt.Sprintf("sandboxed tools run as %s (uid %d) because claw runs as root, and %s (above %s) is not searchable by them: file and http tools will fail", runAs, uid, dir, p), fix
		}
		if fi, err := os.Stat(p); err == nil && !mayAccess(fi, uid, gid, 0o1) {
			return fmt.Sprintf("sandboxed tools run as %s (uid %d) because claw runs as root, and they may not execute %s: file and http tools will fail", runAs, uid, p), fix
		}
	}
	return "", ""
}
