package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Every action gets a private home directory, removed when the action
// ends. A claw killed with SIGKILL cannot remove the homes of its actions
// (or of its prestarted child), and they may hold what a command wrote.
// So homes live in one directory per user, $TMPDIR/claw-sandbox.UID
// (mode 0711, owned by claw's user, never a symlink), and each is locked
// with flock(2) by the claw using it for as long as it exists. The lock
// goes with its holder, whichever PID namespace that is in; the first
// home a claw process makes sweeps the directory of every home nobody
// holds a lock on. When the per-user directory cannot be trusted (someone
// else made it, or it is a symlink), homes are made directly in $TMPDIR,
// as mktemp would, and nothing is swept.

// homePrefix names a home being made: created, then locked, then renamed
// to its final name, so that a sweep never sees an unlocked home in use.
const homePrefix = ".new-"

// staleNewHome is how old a half-made home must be before a sweep takes
// it: making one takes microseconds, so it is left over from a crash.
const staleNewHome = time.Minute

type sandboxHome struct {
	dir  string
	lock int // the locked directory's descriptor, -1 when none
	once sync.Once
}

var homes struct {
	once   sync.Once
	parent string // "" when homes go directly in $TMPDIR
}

// newHome makes an action's home directory.
func newHome() (*sandboxHome, error) {
	homes.once.Do(func() {
		p, err := homeParent(os.TempDir(), os.Geteuid())
		if err != nil {
			return
		}
		homes.parent = p
		sweepHomes(p)
	})
	if homes.parent == "" {
		dir, err := os.MkdirTemp("", "claw-sandbox-")
		if err != nil {
			return nil, fmt.Errorf("sandbox home: %w", err)
		}
		return &sandboxHome{dir: dir, lock: -1}, nil
	}
	return newHomeIn(homes.parent)
}

// homeParent makes (or checks) tmp/claw-sandbox.UID: a directory, not a
// symlink, owned by uid, writable by nobody else.
func homeParent(tmp string, uid int) (string, error) {
	p := filepath.Join(tmp, fmt.Sprintf("claw-sandbox.%d", uid))
	if err := os.Mkdir(p, 0o711); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return "", err
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return "", fmt.Errorf("%s is not a directory", p)
	case int(st.Uid) != uid:
		return "", fmt.Errorf("%s belongs to uid %d, not %d", p, st.Uid, uid)
	case st.Mode&0o022 != 0:
		return "", fmt.Errorf("%s is writable by others (mode %o)", p, st.Mode&0o777)
	}
	return p, nil
}

// newHomeIn makes a locked home in parent.
func newHomeIn(parent string) (*sandboxHome, error) {
	tmp, err := os.MkdirTemp(parent, homePrefix)
	if err != nil {
		return nil, fmt.Errorf("sandbox home: %w", err)
	}
	fd, err := lockDir(tmp, unix.LOCK_EX)
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("sandbox home: %w", err)
	}
	dir := filepath.Join(parent, strings.TrimPrefix(filepath.Base(tmp), homePrefix))
	// never over another home: a plain rename replaces an empty directory
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_NOREPLACE); err != nil {
		unix.Close(fd)
		os.Remove(tmp)
		return nil, fmt.Errorf("sandbox home: %w", err)
	}
	return &sandboxHome{dir: dir, lock: fd}, nil
}

// lockDir opens dir (never through a symlink) and flocks it with how.
func lockDir(dir string, how int) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Flock(fd, how); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// remove deletes the home and then lets go of its lock. Safe to call
// more than once.
func (h *sandboxHome) remove() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		removeTree(h.dir)
		if h.lock >= 0 {
			unix.Close(h.lock)
		}
	})
}

// sweepHomes removes every home in parent that no one holds a lock on,
// and returns what it removed. A half-made home (homePrefix) is removed
// only once it is older than staleNewHome.
func sweepHomes(parent string) []string {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		p := filepath.Join(parent, e.Name())
		if strings.HasPrefix(e.Name(), homePrefix) {
			fi, err := e.Info()
			if err != nil || time.Since(fi.ModTime()) < staleNewHome {
				continue
			}
		}
		fd, err := lockDir(p, unix.LOCK_EX|unix.LOCK_NB)
		if err != nil {
			continue // in use, or not a directory we may open
		}
		if removeTree(p) == nil {
			removed = append(removed, p)
		}
		unix.Close(fd)
	}
	return removed
}

// removeTree removes dir and everything in it, whatever modes the action
// left there: a directory it made unreadable or unwritable (mode 000, as
// its owner may) is given its owner's rights back first. Symlinks are
// never followed: each entry is opened with O_PATH|O_NOFOLLOW, and only
// a directory, reached through that descriptor, is changed.
func removeTree(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	openUp(fd)
	unix.Close(fd)
	return os.RemoveAll(dir)
}

// openUp gives the directory at fd (an O_PATH descriptor), and every
// directory under it, read, write and search rights for its owner.
func openUp(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return
	}
	if st.Mode&0o700 != 0o700 {
		// chmod through the descriptor's /proc link reaches this very
		// directory, whatever its path has become
		unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), st.Mode&0o7777|0o700)
	}
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(d), "dir")
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, n := range names {
		c, err := unix.Openat(fd, n, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		openUp(c)
		unix.Close(c)
	}
}
