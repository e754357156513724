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

// ErrNoBinary means the claw executable to run could not be found.
var ErrNoBinary = errors.New("finding the claw executable")

// UserError is a user to run the service as that could not be looked up.
type UserError struct {
	Name string
	Err  error
}

func (e *UserError) Error() string { return fmt.Sprintf("user %q: %v", e.Name, e.Err) }
func (e *UserError) Unwrap() error { return e.Err }

// Locate fills in what installing needs and the caller did not give: the
// binary (this executable, symbolic links resolved, when empty), and the
// binary, home and workspace as absolute paths. It checks that the user
// exists. Its errors wrap ErrNoBinary, are a *UserError, or come from
// making a path absolute.
func (o *Options) Locate() error {
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNoBinary, err)
		}
		if o.Binary, err = filepath.EvalSymlinks(exe); err != nil {
			return fmt.Errorf("%w: %w", ErrNoBinary, err)
		}
	}
	for _, p := range []*string{&o.Binary, &o.Home, &o.Workspace} {
		if *p != "" && !filepath.IsAbs(*p) {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return err
			}
			*p = abs
		}
	}
	if o.User != "" {
		if _, err := user.Lookup(o.User); err != nil {
			return &UserError{Name: o.User, Err: err}
		}
	}
	return nil
}
