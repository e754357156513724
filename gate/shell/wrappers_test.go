package shell

import (
	"slices"
	"testing"
)

func TestWrappers(t *testing.T) {
	rmRoot := func(via ...string) cmd {
		return cmd{Name: "rm", Argv: []string{"rm", "-rf", "/"}, Opts: []string{"r", "f"}, Paths: []string{"/"}, Via: via}
	}
	envS := rmRoot("env -S")
	envS.Depth = 1
	runCases(t, []tcase{
		{
			name: "sudo with valued options",
			src:  "sudo -u root -g wheel -C 3 -h host -p pw -r r -t t -U u -T 5 -E -H -n rm -rf /",
			cmds: []cmd{{Name: "rm", Argv: []string{"rm", "-rf", "/"}, Via: []string{"sudo"}, Marks: []string{"privilege:sudo"}}},
		},
		{
			name: "sudo -- and an assignment",
			src:  "sudo -- LD_PRELOAD=/x.so rm -rf /",
			cmds: []cmd{{Name: "rm", Assigns: []string{"LD_PRELOAD"}, Marks: []string{"privilege:sudo", "dangerous_env:LD_PRELOAD"}}},
		},
		{
			name: "sudo -D changes the directory",
			src:  "sudo -D /etc rm -f passwd",
			cmds: []cmd{{Name: "rm", Paths: []string{"/etc/passwd", "/etc"}, Writes: []string{"/etc/passwd"}}},
		},
		{
			name: "sudo alone is the wrapper",
			src:  "sudo -i",
			cmds: []cmd{{Name: "sudo", Marks: []string{"privilege:sudo"}}},
		},
		{
			name: "sudoedit files are writes",
			src:  "sudo -e /etc/hosts",
			cmds: []cmd{{Name: "sudo", Writes: []string{"/etc/hosts"}, Marks: []string{"privilege:sudo"}}},
		},
		{
			name: "doas",
			src:  "doas -u root -n rm -rf /",
			cmds: []cmd{{Name: "rm", Via: []string{"doas"}, Marks: []string{"privilege:doas"}}},
		},
		{
			name: "pkexec",
			src:  "pkexec --user root rm -rf /",
			cmds: []cmd{{Name: "rm", Via: []string{"pkexec"}, Marks: []string{"privilege:pkexec"}}},
		},
		{
			name: "run0",
			src:  "run0 --user=root rm -rf /",
			cmds: []cmd{{Name: "rm", Via: []string{"run0"}, Marks: []string{"privilege:run0"}}},
		},
		{
			name: "su -c",
			src:  "su - root -s /bin/bash -c 'rm -rf /'",
			cmds: []cmd{{Name: "rm", Depth: 1, Via: []string{"su -c"}, Marks: []string{"privilege:su"}}},
		},
		{
			name: "su alone",
			src:  "su -l root",
			cmds: []cmd{{Name: "su", Marks: []string{"privilege:su"}}},
		},
		{
			name:    "su -c of a variable",
			src:     `su -c "$CMD"`,
			cmds:    []cmd{{Name: "su", Dynamic: true, Marks: []string{"privilege:su"}}},
			dynamic: true,
			reasons: []string{"su -c of a non-literal"},
		},
		{
			name: "privilege reaches nested commands",
			src:  "sudo bash -c 'rm -rf /'",
			cmds: []cmd{
				{Name: "bash", Via: []string{"sudo"}, Marks: []string{"privilege:sudo", "interpreter"}},
				{Name: "rm", Depth: 1, Via: []string{"sudo", "bash -c"}, Marks: []string{"privilege:sudo"}},
			},
		},
		{
			name: "env with options and assignments",
			src:  "env -i -0 -u HOME -- PATH=/x A=1 rm -rf /",
			cmds: []cmd{{Name: "rm", Assigns: []string{"PATH", "A"}, Via: []string{"env"}, Marks: []string{"dangerous_env:PATH"}}},
		},
		{
			name: "env lone dash",
			src:  "env - rm -rf /",
			cmds: []cmd{rmRoot("env")},
		},
		{
			name: "env -C",
			src:  "env -C / rm -rf x",
			cmds: []cmd{{Name: "rm", Paths: []string{"/x", "/"}}},
		},
		{
			name: "env -S splits and re-parses",
			src:  `env -S "bash -c 'rm -rf /'"`,
			cmds: []cmd{
				{Name: "bash", Depth: 1, Via: []string{"env -S"}},
				{Name: "rm", Depth: 2, Via: []string{"env -S", "bash -c"}},
			},
		},
		{
			name: "env -S separators and escapes",
			src:  `env -S 'rm\_-rf\_/'; env -vS'rm -rf /'; env --split-string='rm -rf /'; env -Srm\ -rf\ /`,
			cmds: []cmd{envS, envS, envS, envS},
		},
		{
			name: "env -S words are env's own arguments",
			src:  `env -S '-i -C / PATH=/x rm -rf x'`,
			cmds: []cmd{{Name: "rm", Paths: []string{"/x", "/"}, Assigns: []string{"PATH"}, Via: []string{"env -S"}, Depth: 1, Marks: []string{"dangerous_env:PATH"}}},
		},
		{
			name: "env -S then the arguments after it",
			src:  `env -S 'ls' -la`,
			cmds: []cmd{{Name: "ls", Argv: []string{"ls", "-la"}, Via: []string{"env -S"}, Depth: 1, Marks: []string{}}},
		},
		{
			name:    "env -S variable as the program",
			src:     `env -S '${X} -rf /'`,
			cmds:    []cmd{{Name: "", Depth: 1, Dynamic: true, Paths: []string{"/"}}},
			dynamic: true,
			reasons: []string{"variable in env -S string"},
		},
		{
			name:    "env -S string that env rejects",
			src:     `env -S 'rm \x /'`,
			cmds:    []cmd{{Name: "env", Dynamic: true}},
			dynamic: true,
			reasons: []string{"env -S string that env rejects"},
		},
		{
			name: "env alone prints the environment",
			src:  "env A=1",
			cmds: []cmd{{Name: "env", Assigns: []string{"A"}, Marks: []string{"reads_env:env"}}},
		},
		{
			name: "env before a shell",
			src:  "env BASH_ENV=/tmp/x bash -lc ls",
			cmds: []cmd{
				{Name: "bash", Via: []string{"env"}, Assigns: []string{"BASH_ENV"}, Marks: []string{"dangerous_env:BASH_ENV"}},
				{Name: "ls", Depth: 1, Assigns: []string{"BASH_ENV"}, Marks: []string{"dangerous_env:BASH_ENV"}},
			},
		},
		{
			name: "env with a path to a shell",
			src:  "env /bin/sh -c 'rm -rf /'",
			cmds: []cmd{{Name: "sh", Via: []string{"env"}}, {Name: "rm", Depth: 1}},
		},
		{
			name: "timeout",
			src:  "timeout -s KILL -k 1 --preserve-status 5 rm -rf /",
			cmds: []cmd{rmRoot("timeout")},
		},
		{
			name: "timeout with only a duration",
			src:  "timeout 5",
			cmds: []cmd{{Name: "timeout"}},
		},
		{
			name: "nice forms",
			src:  "nice -n 5 rm -rf /; nice -5 rm -rf /; nice --adjustment=5 rm -rf /; nice -n5 rm -rf /",
			cmds: []cmd{rmRoot("nice"), rmRoot("nice"), rmRoot("nice"), rmRoot("nice")},
		},
		{
			name: "command",
			src:  "command -p rm -rf /",
			cmds: []cmd{rmRoot("command")},
		},
		{
			name: "command -v runs nothing",
			src:  "command -v rm",
			cmds: []cmd{{Name: "command", Operands: []string{"rm"}, Paths: none()}},
		},
		{
			name: "exec",
			src:  "exec -a name -c -l rm -rf /",
			cmds: []cmd{rmRoot("exec")},
		},
		{
			name: "time program",
			src:  "/usr/bin/time -f %e -o /tmp/t -p rm -rf /",
			cmds: []cmd{{Name: "rm", Via: []string{"time"}, Writes: []string{"/", "/tmp/t"}}},
		},
		{
			name: "nohup, stdbuf, builtin, busybox",
			src:  "nohup rm -rf /; stdbuf -i 0 -oL -e L rm -rf /; builtin rm -rf /; busybox rm -rf /",
			cmds: []cmd{rmRoot("nohup"), rmRoot("stdbuf"), rmRoot("builtin"), rmRoot("busybox")},
		},
		{
			name: "busybox sh",
			src:  "busybox sh -c 'rm -rf /'",
			cmds: []cmd{{Name: "sh", Via: []string{"busybox"}}, {Name: "rm", Depth: 1, Via: []string{"busybox", "sh -c"}}},
		},
		{
			name: "wrapper chain",
			src:  "sudo -u x env -i nice -n 1 timeout 5 command rm -rf /",
			cmds: []cmd{{Name: "rm", Via: []string{"sudo", "env", "nice", "timeout", "command"}, Marks: []string{"privilege:sudo"}}},
		},
		{
			name: "nesting wrappers add depth",
			src:  "setsid -f chroot /mnt unshare -m nsenter -t 1 -m ionice -c 3 chrt -f 10 taskset -c 0 rm -rf /",
			cmds: []cmd{{Name: "rm", Depth: 7, Via: []string{"setsid", "chroot", "unshare", "nsenter", "ionice", "chrt", "taskset"}}},
		},
		{
			name: "flock forms",
			src:  "flock -w 5 /tmp/l rm -rf /; flock /tmp/l -c 'rm -rf /'; flock 9",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Via: []string{"flock"}, Paths: []string{"/", "/tmp/l"}},
				{Name: "rm", Depth: 1, Via: []string{"flock -c"}},
				{Name: "flock"},
			},
		},
		{
			name: "wrappers without a command",
			src:  "ionice -p 1; chrt -p 1; taskset -p 1; chroot /mnt",
			cmds: []cmd{{Name: "ionice"}, {Name: "chrt"}, {Name: "taskset"}, {Name: "chroot", Paths: []string{"/mnt"}}},
		},
		{
			name: "a wrapper outside the system directories is a script and the wrapper",
			src:  "./sudo rm -rf /; /opt/x/env -S 'rm -rf /'; /usr/bin/X11/env rm -rf /",
			cmds: []cmd{
				{Name: "sudo", Marks: []string{"runs_script:/ws/sudo"}, NoMarks: []string{MarkPrivilege}},
				{Name: "rm", Paths: []string{"/"}, Via: []string{"sudo"}, Marks: []string{"privilege:sudo"}, NoMarks: []string{MarkRunsScript}},
				{Name: "env", Marks: []string{"runs_script:/opt/x/env"}},
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"env -S"}},
				{Name: "rm", Paths: []string{"/"}, Via: []string{"env"}, NoMarks: []string{MarkRunsScript}},
			},
		},
		{
			name: "strace and friends",
			src:  "strace -f -o /tmp/t rm -rf /; torsocks rm -rf /; faketime '2020-01-01' rm -rf /",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Via: []string{"strace"}, Writes: []string{"/", "/tmp/t"}},
				rmRoot("torsocks"),
				rmRoot("faketime"),
			},
		},
		{
			name: "systemd-run is privileged unless --user",
			src:  "systemd-run rm -rf /; systemd-run --user rm x",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Marks: []string{"privilege:systemd-run"}},
				{Name: "rm", Depth: 1, NoMarks: []string{MarkPrivilege}},
			},
		},
		{
			name: "runuser",
			src:  "runuser -u bob -- rm -rf /; runuser bob -c 'rm -rf /'",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Marks: []string{"privilege:runuser"}},
				{Name: "rm", Depth: 1, Via: []string{"runuser -c"}, Marks: []string{"privilege:runuser"}},
			},
		},
		{
			name: "more wrappers",
			src:  "prlimit --nofile=64 rm -rf /; setarch x86_64 -R rm -rf /; numactl --cpunodebind=0 rm -rf /; toybox rm -rf /; linux64 rm -rf /",
			cmds: []cmd{rmRoot("prlimit"), rmRoot("setarch"), rmRoot("numactl"), rmRoot("toybox"), rmRoot("linux64")},
		},
		{
			name: "privilege wrappers run the command as another user",
			src:  "gosu root rm -rf /; su-exec 0:0 rm -rf /; setuidgid root rm -rf /; please -u root rm -rf /; pfexec rm -rf /; lxsudo rm -rf /; sudo-rs rm -rf /",
			cmds: []cmd{
				{Name: "rm", Paths: []string{"/"}, Marks: []string{"privilege:gosu"}},
				{Name: "rm", Paths: []string{"/"}, Marks: []string{"privilege:su-exec"}},
				{Name: "rm", Paths: []string{"/"}, Marks: []string{"privilege:setuidgid"}},
				{Name: "rm", Paths: []string{"/"}, Marks: []string{"privilege:please"}},
				{Name: "rm", Paths: []string{"/"}, Marks: []string{"privilege:pfexec"}},
				{Name: "rm", Paths: []string{"/"}, Marks: []string{"privilege:lxsudo"}},
				{Name: "rm", Paths: []string{"/"}, Marks: []string{"privilege:sudo-rs"}},
			},
		},
		{
			name: "capsh runs bash with the arguments after --",
			src:  "capsh --uid=0 -- -c 'rm -rf /'; capsh == --shell=/bin/sh -- -c id; capsh --print",
			cmds: []cmd{
				{Name: "bash", Depth: 1, Via: []string{"capsh"}, Marks: []string{"privilege:capsh"}},
				{Name: "rm", Depth: 2, Paths: []string{"/"}, Via: []string{"capsh", "bash -c"}, Marks: []string{"privilege:capsh"}},
				{Name: "sh", Depth: 1, Marks: []string{"privilege:capsh"}},
				{Name: "id", Depth: 2, Marks: []string{"privilege:capsh"}},
				{Name: "capsh", Marks: []string{"privilege:capsh"}},
			},
		},
		{
			name: "ksu -e and -a",
			src:  "ksu root -n p -e rm -rf /; ksu -a -c 'rm -rf /'; ksu",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Marks: []string{"privilege:ksu"}},
				{Name: "sh", Depth: 1, Marks: []string{"privilege:ksu"}},
				{Name: "rm", Depth: 2, Paths: []string{"/"}, Marks: []string{"privilege:ksu"}},
				{Name: "ksu", Marks: []string{"privilege:ksu"}},
			},
		},
		{
			name: "chpst is privileged with -u or -/",
			src:  "chpst -u root:root rm -rf /; chpst -n 5 -/ /srv ls; chpst -o 64 ls",
			cmds: []cmd{
				{Name: "rm", Paths: []string{"/"}, Via: []string{"chpst"}, Marks: []string{"privilege:chpst"}},
				{Name: "ls", Paths: []string{"/srv"}, Marks: []string{"privilege:chpst"}},
				{Name: "ls", NoMarks: []string{MarkPrivilege}},
			},
		},
		{
			name: "graphical su runs a command line",
			src:  "gksu 'rm -rf /'; kdesu -u root -c 'rm -rf /'; gksudo rm -rf /",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"gksu"}, Marks: []string{"privilege:gksu"}},
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"kdesu"}, Marks: []string{"privilege:kdesu"}},
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"gksudo"}, Marks: []string{"privilege:gksudo"}},
			},
		},
		{
			name: "sudoedit writes its files as root",
			src:  "sudoedit notes.txt; pleaseedit /etc/hosts",
			cmds: []cmd{
				{Name: "sudoedit", Writes: []string{"/ws/notes.txt"}, Marks: []string{"privilege:sudoedit"}},
				{Name: "pleaseedit", Writes: []string{"/etc/hosts"}, Marks: []string{"privilege:pleaseedit"}},
			},
		},
		{
			name:    "envdir sets unknown variables",
			src:     "envdir ./env ls",
			cmds:    []cmd{{Name: "ls", Dynamic: true, Paths: []string{"/ws/env"}, Via: []string{"envdir"}}},
			dynamic: true,
		},
		{
			name: "runners without privilege",
			src:  "ssh-agent rm -rf /; ssh-agent -k; dbus-launch --exit-with-session rm -rf /; gtimeout -s 9 5 rm -rf /; gstdbuf -oL rm -rf /; firejail --noprofile rm -rf /",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"ssh-agent"}},
				{Name: "ssh-agent"},
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"dbus-launch"}},
				rmRoot("gtimeout"), rmRoot("gstdbuf"),
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"firejail"}},
			},
		},
		{
			name: "bwrap options with one to three values",
			src:  "bwrap --ro-bind /usr /usr --overlay /a /b /c --setenv LD_PRELOAD x.so --unshare-all rm -rf /; bwrap --dev-bind / / -- rm -rf /",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"bwrap"}, Assigns: []string{"LD_PRELOAD"}, Marks: []string{"dangerous_env:LD_PRELOAD"}},
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"bwrap"}},
			},
		},
		{
			name:    "bwrap option not understood",
			src:     "bwrap --new-option x rm -rf /",
			cmds:    []cmd{{Name: "bwrap", Dynamic: true}},
			dynamic: true,
			reasons: []string{"bwrap option --new-option not understood"},
		},
		{
			name: "start-stop-daemon starts its program with the arguments after --",
			src:  "start-stop-daemon --start --exec /bin/rm -- -rf /; start-stop-daemon -S -c root -a /bin/sh -- -c id; start-stop-daemon --stop --name x",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Argv: []string{"/bin/rm", "-rf", "/"}, Paths: []string{"/"}, NoMarks: []string{MarkPrivilege}},
				{Name: "sh", Depth: 1, Marks: []string{"privilege:start-stop-daemon"}},
				{Name: "id", Depth: 2, Marks: []string{"privilege:start-stop-daemon"}},
				{Name: "start-stop-daemon"},
			},
		},
		{
			name: "machinectl options after the verb, and its environment",
			src:  "machinectl shell --uid=0 .host /bin/rm -rf /; machinectl shell -E LD_PRELOAD=/x.so .host /bin/ls",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Marks: []string{"privilege:machinectl"}},
				{Name: "ls", Depth: 1, Assigns: []string{"LD_PRELOAD"}, Marks: []string{"privilege:machinectl", "dangerous_env:LD_PRELOAD"}},
			},
		},
		{
			name: "systemd-run Exec properties and environment",
			src:  "systemd-run -p ExecStartPre='-/bin/rm -rf /' true; systemd-run --user -E PATH=/x ls",
			cmds: []cmd{
				{Name: "true", Depth: 1, Marks: []string{"privilege:systemd-run"}},
				{Name: "rm", Depth: 1, Paths: []string{"/"}, Via: []string{"systemd-run -p ExecStartPre"}, Marks: []string{"privilege:systemd-run"}},
				{Name: "ls", Depth: 1, Assigns: []string{"PATH"}, Marks: []string{"dangerous_env:PATH"}, NoMarks: []string{MarkPrivilege}},
			},
		},
		{
			name: "machinectl shell",
			src:  "machinectl shell root@.host /bin/sh; machinectl list",
			cmds: []cmd{
				{Name: "sh", Depth: 1, Via: []string{"machinectl"}, Marks: []string{"privilege:machinectl"}},
				{Name: "machinectl", Paths: none()},
			},
		},
		{
			name: "gdb runs programs",
			src:  "gdb -batch -ex run --args rm -rf /; gdb -batch -ex '!id'",
			cmds: []cmd{
				{Name: "gdb", Marks: []string{"exec_flag:gdb --args"}}, {Name: "rm", Depth: 1, Via: []string{"gdb --args"}, Paths: []string{"/"}},
				{Name: "gdb", Marks: []string{"exec_flag:gdb -ex"}}, {Name: "id", Depth: 1},
			},
		},
		{
			name: "sg and script",
			src:  "sg wheel -c 'rm -rf /'; script -q -c 'rm -rf /' /tmp/log",
			cmds: []cmd{
				{Name: "rm", Depth: 1, Via: []string{"sg"}, Marks: []string{"privilege:sg"}},
				{Name: "rm", Depth: 1, Via: []string{"script -c"}, Writes: []string{"/", "/tmp/log"}},
			},
		},
	})
}

func TestRecursion(t *testing.T) {
	runCases(t, []tcase{
		{
			name: "bash -c",
			src:  "bash -c 'a; b'",
			cmds: []cmd{
				{Name: "bash", Opts: []string{"c"}, Marks: []string{"interpreter:bash"}, NoMarks: []string{MarkStdinShell}},
				{Name: "a", Depth: 1, Via: []string{"bash -c"}},
				{Name: "b", Depth: 1, Via: []string{"bash -c"}},
			},
		},
		{
			name: "flag clusters with c",
			src:  "sh -xec 'a'; zsh -lc 'b'; dash -c c; ksh -c d; ash -c e",
			cmds: []cmd{
				{Name: "sh"}, {Name: "a", Depth: 1, Via: []string{"sh -c"}},
				{Name: "zsh"}, {Name: "b", Depth: 1, Via: []string{"zsh -c"}},
				{Name: "dash"}, {Name: "c", Depth: 1}, {Name: "ksh"}, {Name: "d", Depth: 1}, {Name: "ash"}, {Name: "e", Depth: 1},
			},
		},
		{
			name: "shell options with values before -c",
			src:  "bash -o pipefail -O extglob --norc -c 'a' x y",
			cmds: []cmd{{Name: "bash", Operands: []string{"a", "x", "y"}}, {Name: "a", Depth: 1}},
		},
		{
			name:    "bash -c of a variable",
			src:     `bash -c "$X"`,
			cmds:    []cmd{{Name: "bash", Dynamic: true}},
			dynamic: true,
			reasons: []string{"bash -c of a non-literal"},
		},
		{
			name:    "bash -c of a partly literal string is still looked at",
			src:     `bash -c "rm -rf $X"`,
			cmds:    []cmd{{Name: "bash", Dynamic: true}, {Name: "rm", Depth: 1, Dynamic: true}},
			dynamic: true,
		},
		{
			name: "eval joins its words",
			src:  "eval rm -rf '/'",
			cmds: []cmd{{Name: "eval"}, {Name: "rm", Depth: 1, Via: []string{"eval"}, Paths: []string{"/"}}},
		},
		{
			name:    "eval of a variable",
			src:     "eval $X; eval $C -rf /",
			cmds:    []cmd{{Name: "eval", Dynamic: true}, {Name: "eval", Dynamic: true}, {Name: "", Depth: 1, Dynamic: true, Paths: []string{"/"}}},
			dynamic: true,
			reasons: []string{"eval of a non-literal"},
		},
		{
			name: "eval keeps cd",
			src:  "eval 'cd /etc'; rm -f passwd",
			cmds: []cmd{{Name: "eval"}, {Name: "cd", Depth: 1}, {Name: "rm", Paths: []string{"/etc/passwd"}}, {Name: "rm", Paths: []string{"/ws/passwd"}}},
		},
		{
			name: "source and dot are scripts, not parsed",
			src:  "source ./env.sh; . ~/x",
			cmds: []cmd{
				{Name: "source", Marks: []string{"runs_script:/ws/env.sh"}},
				{Name: ".", Marks: []string{"runs_script:/home/u/x"}},
			},
		},
		{
			name: "here-string to a shell",
			src:  "bash <<< 'rm -rf /'",
			cmds: []cmd{
				{Name: "bash", Stdin: "herestring", Marks: []string{"stdin_shell:herestring"}},
				{Name: "rm", Depth: 1, Via: []string{"bash <<<"}, Paths: []string{"/"}},
			},
			redirects: []Redirect{{Op: "<<<"}},
		},
		{
			name: "literal here-document to a shell",
			src:  "sh <<'EOF'\nrm -rf $HOME\nEOF",
			cmds: []cmd{
				{Name: "sh", Stdin: "heredoc", Marks: []string{"stdin_shell:heredoc"}},
				{Name: "rm", Depth: 1, Via: []string{"sh <<"}, Paths: []string{"/home/u"}, Dynamic: true},
			},
			dynamic: true,
		},
		{
			name: "unquoted here-document without expansions",
			src:  "sh <<EOF\nrm -rf /\nEOF",
			cmds: []cmd{{Name: "sh", Stdin: "heredoc"}, {Name: "rm", Depth: 1}},
		},
		{
			name:    "here-document with expansion to a shell",
			src:     "bash <<EOF\nrm -rf $DIR\nEOF",
			cmds:    []cmd{{Name: "bash", Stdin: "heredoc", Dynamic: true, Marks: []string{"stdin_shell:heredoc"}}},
			dynamic: true,
			reasons: []string{"here-doc to shell with expansion"},
		},
		{
			name: "here-document substitutions run",
			src:  "cat <<EOF\n$(rm -rf /)\nEOF",
			cmds: []cmd{{Name: "rm", Depth: 1}, {Name: "cat", Stdin: "heredoc"}},
		},
		{
			name: "here-document to a non-shell is not parsed",
			src:  "cat <<'EOF'\nrm -rf /\nEOF",
			cmds: []cmd{{Name: "cat", Stdin: "heredoc"}},
		},
		{
			name: "echo piped into a shell is parsed",
			src:  "echo 'rm -rf /' | sh",
			cmds: []cmd{
				{Name: "echo"},
				{Name: "sh", Stdin: "pipe", Marks: []string{"stdin_shell:pipe"}},
				{Name: "rm", Depth: 1, Via: []string{"sh |"}},
			},
		},
		{
			name: "cat of a here-document piped into a shell",
			src:  "cat <<EOF | bash\nrm -rf /\nEOF",
			cmds: []cmd{{Name: "cat", Stdin: "heredoc"}, {Name: "bash", Stdin: "pipe"}, {Name: "rm", Depth: 1}},
		},
		{
			name: "find -exec",
			src:  `find / -name '*.log' -exec rm -rf {} \;`,
			cmds: []cmd{
				{Name: "find", Opts: []string{"name", "exec"}, Operands: []string{"/"}, Paths: []string{"/"}, Marks: []string{"exec_flag:find -exec"}},
				{Name: "rm", Depth: 1, Via: []string{"find -exec"}, Operands: []string{"{}"}, Paths: []string{"/"}},
			},
		},
		{
			name: "find -execdir, -ok, -okdir with +",
			src:  "find . -execdir a {} + -ok b {} ';' -okdir c \\;",
			cmds: []cmd{
				{Name: "find", Paths: []string{"/ws"}},
				{Name: "a", Depth: 1, Via: []string{"find -execdir"}, Paths: []string{"/ws"}},
				{Name: "b", Depth: 1, Via: []string{"find -ok"}},
				{Name: "c", Depth: 1, Via: []string{"find -okdir"}},
			},
		},
		{
			name:    "find -exec a shell with the file name",
			src:     `find . -exec sh -c '{}' \;`,
			cmds:    []cmd{{Name: "find"}, {Name: "sh", Depth: 1, Dynamic: true}, {Name: "ws", Depth: 2, Marks: []string{"runs_script:/ws"}}},
			dynamic: true,
		},
		{
			name: "find -exec sh -c with {} in the script",
			src:  `find / -exec sh -c 'rm -rf {}' \;`,
			cmds: []cmd{
				{Name: "find"}, {Name: "sh", Depth: 1, Dynamic: true},
				{Name: "rm", Depth: 2, Via: []string{"find -exec", "sh -c"}, Paths: []string{"/"}},
			},
			dynamic: true,
		},
		{
			name: "xargs sh -c with the replacement in the script",
			src:  `xargs -I{} sh -c 'rm -rf {}'`,
			cmds: []cmd{
				{Name: "xargs"}, {Name: "sh", Depth: 1, Dynamic: true},
				{Name: "rm", Depth: 2, Dynamic: true},
			},
			dynamic: true,
		},
		{
			name: "xargs -I",
			src:  "xargs -I{} rm -rf {}",
			cmds: []cmd{
				{Name: "xargs", Marks: []string{"exec_flag:xargs"}, Paths: none()},
				{Name: "rm", Depth: 1, Via: []string{"xargs"}, Dynamic: true, Argv: []string{"rm", "-rf", "{}"}},
			},
			dynamic: true,
		},
		{
			name: "xargs option arity",
			src:  "xargs -0 -r -t -n 1 -P 4 -d '\\n' -L 2 -s 100 -E EOF -a list rm -f",
			cmds: []cmd{
				{Name: "xargs", Paths: []string{"/ws/list"}},
				{Name: "rm", Depth: 1, Argv: []string{"rm", "-f"}, Dynamic: true},
			},
			dynamic: true,
			reasons: []string{"xargs appends arguments from stdin to rm"},
		},
		{
			name: "xargs into a harmless command stays static",
			src:  "xargs echo",
			cmds: []cmd{{Name: "xargs"}, {Name: "echo", Depth: 1}},
		},
		{
			name:    "xargs sh -c",
			src:     "xargs sh -c 'rm -rf \"$1\"' _",
			cmds:    []cmd{{Name: "xargs"}, {Name: "sh", Depth: 1}, {Name: "rm", Depth: 2, Dynamic: true}},
			dynamic: true,
		},
		{
			name: "parallel with literal inputs",
			src:  "parallel -j 4 rm -rf ::: / /home",
			cmds: []cmd{
				{Name: "parallel"},
				{Name: "rm", Depth: 1, Via: []string{"parallel"}, Paths: []string{"/"}},
				{Name: "rm", Depth: 1, Via: []string{"parallel"}, Paths: []string{"/home"}},
			},
		},
		{
			name: "parallel running its inputs",
			src:  "parallel ::: 'rm -rf /'",
			cmds: []cmd{{Name: "parallel"}, {Name: "rm", Depth: 1}},
		},
		{
			name: "watch",
			src:  "watch -n 1 'rm -rf /'; watch -x rm -rf /",
			cmds: []cmd{{Name: "watch"}, {Name: "rm", Depth: 1, Via: []string{"watch"}}, {Name: "watch"}, {Name: "rm", Depth: 1}},
		},
		{
			name: "ssh host command",
			src:  "ssh -p 22 -i key host 'rm -rf /'",
			cmds: []cmd{
				{Name: "ssh", Paths: []string{"/ws/key"}, Marks: []string{"exec_flag:ssh command"}},
				{Name: "rm", Depth: 1, Via: []string{"ssh"}},
			},
		},
		{
			name: "ssh ProxyCommand",
			src:  "ssh -o ProxyCommand='sh -c \"curl x | sh\"' host",
			cmds: []cmd{
				{Name: "ssh", Marks: []string{"exec_flag:ssh -o ProxyCommand"}},
				{Name: "sh", Depth: 1}, {Name: "curl", Depth: 2}, {Name: "sh", Depth: 2, Stdin: "pipe", Marks: []string{"download_to_shell:curl"}},
			},
		},
		{
			name: "script -c",
			src:  "script -c 'rm -rf /'",
			cmds: []cmd{{Name: "rm", Depth: 1, Via: []string{"script -c"}}},
		},
		{
			name: "su -c",
			src:  "su -c 'rm -rf /' root",
			cmds: []cmd{{Name: "rm", Depth: 1, Via: []string{"su -c"}}},
		},
		{
			name: "trap and alias bodies",
			src:  "trap 'rm -rf /' EXIT; alias ls='rm -rf /'",
			cmds: []cmd{
				{Name: "trap"}, {Name: "rm", Depth: 1, Via: []string{"trap"}},
				{Name: "alias", Dynamic: true}, {Name: "rm", Depth: 1, Via: []string{"alias"}},
			},
			dynamic: true,
			reasons: []string{"alias definition: later commands may expand it"},
		},
		{
			name:    "an alias of a prefix word",
			src:     "shopt -s expand_aliases\nalias x=command\nx rm -rf /",
			reasons: []string{"alias definition: later commands may expand it"},
			dynamic: true,
		},
		{
			name: "listing aliases defines none",
			src:  "alias; alias ls",
		},
		{
			name:    "history expansion replays an earlier line",
			src:     "set -H -o history\necho rm -rf /\n!!:1-$",
			reasons: []string{reasonHistExpand},
			dynamic: true,
		},
		{
			name:    "history expansion through shopt -o",
			src:     "shopt -so histexpand; set -o history\necho rm -rf /\n!!:1-$",
			reasons: []string{reasonHistExpand},
			dynamic: true,
		},
		{
			name:    "fc runs a command from the history",
			src:     "history -s 'rm -rf /'; fc -s",
			reasons: []string{"fc runs commands from the history"},
			dynamic: true,
		},
		{
			name: "listing the history and other options",
			src:  "fc -l; set -euo pipefail; set +H; set -- -H; shopt -s nullglob",
		},
		{
			name: "nested depth through several layers",
			src:  `bash -c "sh -c 'eval \"rm -rf /\"'"`,
			cmds: []cmd{
				{Name: "bash"}, {Name: "sh", Depth: 1}, {Name: "eval", Depth: 2},
				{Name: "rm", Depth: 3, Via: []string{"bash -c", "sh -c", "eval"}},
			},
		},
	})
}

func TestSplitEnvString(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    []string
		dynamic []bool // nil: no dynamic word
		bad     bool
	}{
		{name: "blanks", in: " rm \t-rf\n/ ", want: []string{"rm", "-rf", "/"}},
		{name: "underscore separates", in: `rm\_-rf\_/`, want: []string{"rm", "-rf", "/"}},
		{name: "underscore in double quotes is a space", in: `"a\_b" c`, want: []string{"a b", "c"}},
		{name: "quotes join", in: `'a b'"c d"e`, want: []string{"a bc de"}},
		{name: "empty quotes are a word", in: `a '' b`, want: []string{"a", "", "b"}},
		{name: "escapes", in: `a\tb \\ \" \' \$ \#`, want: []string{"a\tb", `\`, `"`, "'", "$", "#"}},
		{name: "single quotes keep backslashes", in: `'a\_b\n' 'c\'d' 'e\\f'`, want: []string{`a\_b\n`, "c'd", `e\f`}},
		{name: "comment at the start of a word", in: "ls # rm -rf /", want: []string{"ls"}},
		{name: "hash inside a word", in: "a#b", want: []string{"a#b"}},
		{name: "backslash c ends the string", in: `ls\c rm -rf /`, want: []string{"ls"}},
		{name: "variable", in: "rm ${HOME}/x", want: []string{"rm", "${HOME}/x"}, dynamic: []bool{false, true}},
		{name: "no variable in single quotes", in: "'${X}'", want: []string{"${X}"}},
		{name: "unknown escape", in: `rm \x`, bad: true},
		{name: "trailing backslash", in: `rm \`, bad: true},
		{name: "lone dollar", in: "echo $X", bad: true},
		{name: "open quote", in: "echo 'x", bad: true},
		{name: "backslash c in double quotes", in: `"a\c"`, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			words, ok := splitEnvString(tc.in)
			if ok == tc.bad {
				t.Fatalf("ok = %v, want %v", ok, !tc.bad)
			}
			var got []string
			var dyn []bool
			anyDyn := false
			for _, w := range words {
				got = append(got, w.val)
				dyn = append(dyn, w.dyn)
				anyDyn = anyDyn || w.dyn
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("words = %q, want %q", got, tc.want)
			}
			if tc.dynamic != nil && !slices.Equal(dyn, tc.dynamic) || tc.dynamic == nil && anyDyn {
				t.Errorf("dynamic = %v, want %v", dyn, tc.dynamic)
			}
		})
	}
}
