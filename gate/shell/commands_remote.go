package shell

import (
	"strings"
)

// --- remote shells and copies ---

func (b *build) sshOptions() {
	for _, v := range b.p.all("o") {
		key, val := splitSSHOption(v.val)
		switch strings.ToLower(key) {
		case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
			b.mark(MarkExecFlag, "ssh -o "+key)
			if v.dyn {
				b.dynamic("ssh -o " + key + " of a non-literal")
				continue
			}
			if strings.ToLower(key) != "remotecommand" && val != "" && val != "none" {
				b.lenientString(field{val: val}, "ssh -o "+key)
			}
		}
	}
}

func splitSSHOption(s string) (string, string) {
	i := strings.IndexAny(s, "= \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], "= \t")
}

func (b *build) ssh() {
	b.parse(specs["ssh"])
	b.optPaths(false, "i", "F")
	b.optPaths(true, "E")
	b.sshOptions()
	if b.p.end+1 >= len(b.args) {
		return
	}
	rest := b.args[b.p.end+1:]
	b.mark(MarkExecFlag, "ssh command")
	for _, f := range rest {
		if f.dyn {
			b.dynamic("ssh of a non-literal")
			b.nestedArgv(rest, "ssh", func(inv *invocation) { inv.cwd = "" })
			return
		}
	}
	src := joinFields(rest).val
	b.later = append(b.later, func() {
		ns := b.child()
		ns.cwd = "" // the remote directory is unknown
		b.a.lenient(src, ns, "ssh")
	})
}

// localPaths records the operands that name local files; the last one is
// written when last is set (scp, rsync destinations).
func (b *build) localPaths(last bool) {
	ops := b.p.operands
	for k, i := range ops {
		f := b.args[i]
		if !f.dyn && (isRemoteSpec(f.val) || isURL(f.val)) {
			continue
		}
		b.addPath(f, last && k == len(ops)-1 && len(ops) > 1)
	}
}

func (b *build) scp() {
	b.parse(specs["scp"])
	b.optPaths(false, "i", "F")
	b.sshOptions()
	if v, ok := b.p.val("S"); ok {
		b.mark(MarkExecFlag, "scp -S")
		b.lenientString(v, "scp -S")
	}
	b.localPaths(true)
}

func (b *build) sftp() {
	b.parse(specs["sftp"])
	b.optPaths(false, "i", "F", "b")
	b.sshOptions()
	for _, o := range []string{"S", "D"} {
		if v, ok := b.p.val(o); ok {
			b.mark(MarkExecFlag, "sftp -"+o)
			b.lenientString(v, "sftp -"+o)
		}
	}
}

func (b *build) rsync() {
	b.parse(specs["rsync"])
	if v, ok := b.p.val("e", "rsh"); ok {
		b.mark(MarkExecFlag, "rsync -e")
		b.lenientString(v, "rsync -e")
	}
	if _, ok := b.p.val("rsync-path"); ok {
		b.mark(MarkExecFlag, "rsync --rsync-path")
	}
	b.optPaths(false, "exclude-from", "include-from", "files-from", "password-file")
	b.optPaths(true, "log-file", "write-batch", "only-write-batch")
	b.localPaths(true)
}
