package main

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
// to write in it.

// runAsIDs resolves the run_as user, or ok=false when actions keep claw's
// own uid (claw is not root, or run_as is empty).
func runAsIDs(runAs string) (uid, gid int, ok bool, err error) {
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

// handWorkspaceToRunAs gives a workspace claw init just created to the
// run_as user, with mode 0700.
func handWorkspaceToRunAs(ws, runAs string) error {
	uid, gid, ok, err := runAsIDs(runAs)
	if err != nil || !ok {
		return err
	}
	if err := os.Chown(ws, uid, gid); err != nil {
		return fmt.Errorf("giving the workspace to %s: %w", runAs, err)
	}
	return nil
}

// checkWorkspaceOwner warns when sandboxed actions, running as the run_as
// user, will not be able to write in the workspace.
func checkWorkspaceOwner(g *globals, ws, runAs string) {
	uid, _, ok, err := runAsIDs(runAs)
	if err != nil {
		warnf(g.stderr, "%v", err)
		return
	}
	if !ok {
		return
	}
	for dir := filepath.Dir(ws); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o001 == 0 {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
				warnf(g.stderr, "sandboxed actions run as %s (uid %d) because claw runs as root, and %s (above the workspace) is not searchable by them: file tools will fail", runAs, uid, dir)
				infof(g.stderr, "hint: chmod o+x %s, move the workspace, or set [sandbox] run_as = \"\"", dir)
				return
			}
		}
		if dir == "/" {
			break
		}
	}
	fi, err := os.Stat(ws)
	if err != nil {
		return
	}
	st, isUnix := fi.Sys().(*syscall.Stat_t)
	if !isUnix || int(st.Uid) == uid || fi.Mode().Perm()&0o002 != 0 {
		return
	}
	warnf(g.stderr, "sandboxed actions run as %s (uid %d) because claw runs as root, and the workspace %s belongs to uid %d: they cannot write in it", runAs, uid, ws, st.Uid)
	infof(g.stderr, "hint: chown -R %s %s, or set [sandbox] run_as = \"\" to keep uid 0 without capabilities", runAs, ws)
}
