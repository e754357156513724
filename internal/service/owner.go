package service

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
)

// HandTo gives each of dirs, and everything below it, to the user name and
// its group (group, when set), without following symbolic links. A dir
// that does not exist is skipped.
func HandTo(name, group string, dirs ...string) error {
	uid, gid, err := lookupIDs(name, group)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		if err := chownTree(dir, uid, gid); err != nil {
			return fmt.Errorf("handing %s to %s: %w", dir, name, err)
		}
	}
	return nil
}

func lookupIDs(name, group string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("user %q: %w", name, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	if group != "" && group != name {
		gr, err := user.LookupGroup(group)
		if err != nil {
			return 0, 0, fmt.Errorf("group %q: %w", group, err)
		}
		gid, _ = strconv.Atoi(gr.Gid)
	}
	return uid, gid, nil
}

// chownTree gives dir and everything below it to uid:gid, without following
// symbolic links.
func chownTree(dir string, uid, gid int) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}
