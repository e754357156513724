package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxSymlinkHops bounds symlink resolution, as the kernel's ELOOP does.
const maxSymlinkHops = 40

// maxPathBytes bounds a path before it is judged.
const maxPathBytes = 4096

// safeDevices are device paths that are never a violation to read or write.
var safeDevices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/random": true, "/dev/urandom": true,
	"/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
}

// PathResolver turns the paths an action names into the canonical paths the
// policies judge and the sandbox enforces.
type PathResolver struct {
	Home string // expands ~ and $HOME
	Cwd  string // the action's working directory, canonical
	// Lstat and Readlink default to the os functions; tests may point them
	// at a fake tree.
	Lstat    func(string) (fs.FileInfo, error)
	Readlink func(string) (string, error)
}

// Canonical returns the canonical absolute form of p:
//
//   - a NUL byte, an empty path or an over-long path is an error;
//   - ~, ~/x, ~root and $HOME, ${HOME}, $PWD are expanded (any other
//     variable is an error: it cannot be known statically);
//   - a relative path is resolved against the cwd;
//   - every existing component is resolved through symlinks the way the
//     kernel walks it (so link/.. names the link target's parent), and
//     the part that does not exist yet is appended lexically;
//   - /proc/self/root, /proc/thread-self/root and /proc/PID/root are
//     re-rooted at /, /proc/self/cwd at the cwd, /dev/fd/0-2 and
//     /proc/self/fd/0-2 become /dev/stdin, /dev/stdout, /dev/stderr;
//     other /proc/PID/{root,cwd,fd} forms are an error.
func (r *PathResolver) Canonical(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	if len(p) > maxPathBytes {
		return "", fmt.Errorf("path longer than %d bytes", maxPathBytes)
	}
	p, err := r.expand(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		p = r.Cwd + "/" + p
	}
	out, err := r.walk(p)
	if err != nil {
		return "", err
	}
	return r.procForms(out)
}

func (r *PathResolver) expand(p string) (string, error) {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if r.Home == "" {
			return "", errors.New("~ used but no home directory is known")
		}
		p = r.Home + p[1:]
	case p == "~root" || strings.HasPrefix(p, "~root/"):
		p = "/root" + p[len("~root"):]
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("unsupported ~user form in %q", p)
	}
	if !strings.Contains(p, "$") {
		return p, nil
	}
	var bad error
	out := os.Expand(p, func(name string) string {
		switch name {
		case "HOME":
			return r.Home
		case "PWD":
			return r.Cwd
		}
		if bad == nil {
			bad = fmt.Errorf("variable $%s in a path cannot be resolved statically", name)
		}
		return ""
	})
	if bad != nil {
		return "", bad
	}
	return out, nil
}

// walk resolves p component by component.
func (r *PathResolver) walk(p string) (string, error) {
	lstat, readlink := r.Lstat, r.Readlink
	if lstat == nil {
		lstat = os.Lstat
	}
	if readlink == nil {
		readlink = os.Readlink
	}
	rest := splitPath(p)
	resolved := "/"
	exists := true
	hops := 0
	procWho := "" // set while resolved is /proc/<who>
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			// Back up into a directory that may exist: what follows is
			// resolved again, as the kernel would once the missing part
			// is created, and /proc/<who> is magic again.
			resolved = filepath.Dir(resolved)
			exists = true
			procWho = ""
			if filepath.Dir(resolved) == "/proc" && isProcWho(filepath.Base(resolved)) {
				procWho = filepath.Base(resolved)
			}
			continue
		}
		next := filepath.Join(resolved, c)
		// /proc/<who>/{root,cwd} are magic links that name objects of the
		// process that opens them: for the sandboxed action that is its
		// own root and working directory, never claw's.
		if exists && resolved == "/proc" && isProcWho(c) {
			resolved, procWho = next, c
			continue
		}
		if procWho != "" {
			self := procWho == "self" || procWho == "thread-self"
			procWho = ""
			switch {
			case c == "root":
				resolved = "/"
				continue
			case c == "cwd" && self:
				resolved = r.Cwd
				continue
			case c == "cwd":
				return "", fmt.Errorf("%q names another process's working directory", p)
			}
			resolved, exists = next, false
			continue
		}
		if !exists {
			resolved = next
			continue
		}
		fi, err := lstat(next)
		if err != nil {
			// Missing (or unreadable) from here on: judge the rest
			// lexically; the sandbox resolves it for real.
			exists = false
			resolved = next
			continue
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("too many symlinks resolving %q", p)
		}
		target, err := readlink(next)
		if err != nil {
			return "", fmt.Errorf("reading symlink %q: %w", next, err)
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved, nil
}

func isProcWho(c string) bool {
	if c == "self" || c == "thread-self" {
		return true
	}
	_, err := strconv.Atoi(c)
	return err == nil
}

func splitPath(p string) []string { return strings.Split(p, "/") }

// procForms maps /proc and /dev/fd aliases to what they name for the
// sandboxed process, or refuses them.
func (r *PathResolver) procForms(p string) (string, error) {
	if strings.HasPrefix(p, "/dev/fd/") || p == "/dev/fd" {
		return fdForm(p, "/dev/fd")
	}
	if !strings.HasPrefix(p, "/proc/") {
		return p, nil
	}
	parts := strings.SplitN(strings.TrimPrefix(p, "/proc/"), "/", 3)
	if len(parts) < 2 {
		return p, nil
	}
	who, what := parts[0], parts[1]
	rest := ""
	if len(parts) == 3 {
		rest = parts[2]
	}
	self := who == "self" || who == "thread-self"
	if _, err := strconv.Atoi(who); err != nil && !self {
		return p, nil
	}
	switch what {
	case "fd":
		if !self {
			return "", fmt.Errorf("%q names another process's file descriptors", p)
		}
		if rest == "" {
			return p, nil
		}
		return fdForm("/dev/fd/"+rest, "/dev/fd")
	case "exe", "map_files":
		return "", fmt.Errorf("%q names a process image", p)
	}
	return p, nil
}

func fdForm(p, prefix string) (string, error) {
	n := strings.TrimPrefix(strings.TrimPrefix(p, prefix), "/")
	switch n {
	case "0":
		return "/dev/stdin", nil
	case "1":
		return "/dev/stdout", nil
	case "2":
		return "/dev/stderr", nil
	case "":
		return p, nil
	}
	return "", fmt.Errorf("%q names an inherited file descriptor", p)
}
