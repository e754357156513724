package shell

import (
	"path/filepath"
	"slices"
	"strings"
)

// --- directory tracking ---

// cd changes the directory of the rest of the list. Whether the target
// exists is not known, so unless it is an ancestor of the directory (which
// exists) the cd may fail and leave the shell where it was: both stay
// possible (state.alt), and `cd DIR && …` or `cd DIR || exit` keep only
// DIR for what runs after success. A target taken from CDPATH or, with
// cdable_vars, from a variable is unknown.
func (b *build) cd() {
	b.parse(cdSpec)
	known, target := true, ""
	f, ok := b.operand(0)
	switch {
	case b.name == "popd":
		known = false
	case !ok:
		if b.name == "pushd" || b.a.opts.Home == "" {
			known = false
		} else {
			target = b.a.opts.Home
		}
	case f.dyn || f.val == "-" || b.name == "pushd" && (strings.HasPrefix(f.val, "+") || strings.HasPrefix(f.val, "-")):
		known = false
	default:
		target = f.val
	}
	if known && ok && searched(target) && (b.st.sh.cdable || slices.Contains(b.cmd.Assigns, "CDPATH")) {
		b.dynamic("cd target looked up through CDPATH or cdable_vars")
		known = false
	}
	dirs := []string{b.cwd}
	if !b.inv.wrapped {
		dirs = b.st.cwds()
	}
	var to []string
	sure := true
	for _, d := range dirs {
		if !known || d == "" && !filepath.IsAbs(target) {
			to = append(to, "")
			continue
		}
		t := resolve(target, d)
		b.addResolved(t, false)
		to = append(to, t)
		sure = sure && isAncestor(t, d)
	}
	if b.inv.wrapped {
		return
	}
	if slices.Contains(to, "") {
		b.dynamic(reasonCwd)
	}
	b.a.setCwds(b.st, to)
	done := b.st.cwds()
	if !sure {
		b.a.setCwds(b.st, append(to, dirs...))
	}
	b.st.ok = done
}

// searched reports a cd target that bash may look up in CDPATH or, with
// cdable_vars, as a variable: a relative name not starting with . or ..
func searched(dir string) bool {
	return dir != "" && !filepath.IsAbs(dir) && dir != "." && dir != ".." &&
		!strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../")
}

// isAncestor reports a directory that is dir or, lexically, one of its
// parents: it exists if dir does (cd follows the logical path).
func isAncestor(t, dir string) bool {
	if dir == "" {
		return t == "/"
	}
	t, dir = filepath.Clean(t), filepath.Clean(dir)
	return t == "/" || t == dir || strings.HasPrefix(dir, t+"/")
}
