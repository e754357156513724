package shell

import "testing"

func TestVariablesSetWithoutAssignment(t *testing.T) {
	ls := func(name string) cmd {
		return cmd{Name: "ls", Assigns: []string{name}, Marks: []string{"dangerous_env:" + name}}
	}
	runCases(t, []tcase{
		{
			name: "read",
			src:  "read PATH; ls; read -r -p 'x: ' IFS; ls; read -a LD_PRELOAD; ls",
			cmds: []cmd{
				{Name: "read", Marks: []string{"dangerous_env:PATH"}}, ls("PATH"),
				{Name: "read", Marks: []string{"dangerous_env:IFS"}}, {Name: "ls", Marks: []string{"dangerous_env:IFS"}},
				{Name: "read", Marks: []string{"dangerous_env:LD_PRELOAD"}}, {Name: "ls", Marks: []string{"dangerous_env:LD_PRELOAD"}},
			},
		},
		{
			name: "printf -v, mapfile, readarray, getopts, wait -p",
			src:  "printf -v PATH %s /tmp; mapfile BASH_ENV < f; readarray -t LD_PRELOAD < f; getopts a PS4; wait -p IFS; ls",
			cmds: []cmd{
				{Name: "printf", Marks: []string{"dangerous_env:PATH"}},
				{Name: "mapfile", Stdin: "file", Marks: []string{"dangerous_env:BASH_ENV"}},
				{Name: "readarray", Stdin: "file", Marks: []string{"dangerous_env:LD_PRELOAD"}},
				{Name: "getopts", Paths: none(), Marks: []string{"dangerous_env:PS4"}},
				{Name: "wait", Marks: []string{"dangerous_env:IFS"}},
				{Name: "ls", Assigns: []string{"PATH", "BASH_ENV", "LD_PRELOAD", "PS4", "IFS"}},
			},
		},
		{
			name: "declaration builtins run as commands",
			src:  "builtin export PATH; ls; command declare -x GIT_PAGER=x; git log",
			cmds: []cmd{
				{Name: "export", Marks: []string{"dangerous_env:PATH"}}, ls("PATH"),
				{Name: "declare", Marks: []string{"dangerous_env:GIT_PAGER"}}, {Name: "git", Marks: []string{"dangerous_env:GIT_PAGER"}},
			},
		},
		{
			name: "mapfile -C runs its callback",
			src:  "mapfile -C 'rm -rf /' -c 1 lines < f",
			cmds: []cmd{{Name: "mapfile", Stdin: "file", Marks: []string{"exec_flag:mapfile -C"}}, {Name: "rm", Depth: 1, Stdin: "file", Via: []string{"mapfile -C"}}},
		},
		{
			name: "ordinary names",
			src:  "read -r name; printf -v out %s x; mapfile -t lines < f; getopts ab opt; echo $name",
			cmds: []cmd{
				{Name: "read", NoMarks: []string{MarkDangerousEnv}}, {Name: "printf", NoMarks: []string{MarkDangerousEnv}},
				{Name: "mapfile", Stdin: "file", NoMarks: []string{MarkDangerousEnv}}, {Name: "getopts", NoMarks: []string{MarkDangerousEnv}},
				{Name: "echo", Assigns: none()},
			},
		},
		{
			name: "loop variables, arithmetic and name references",
			src:  "for PATH in /tmp/x; do ls; done; select IFS in a; do ls; done; let LD_PRELOAD=1; ((BASH_ENV=0)); declare -n r=PS4; ls",
			cmds: []cmd{
				ls("PATH"), {Name: "ls", Assigns: []string{"PATH", "IFS"}},
				{Name: "declare"},
				{Name: "ls", Assigns: []string{"PATH", "IFS", "LD_PRELOAD", "BASH_ENV", "PS4"}},
			},
		},
		{
			name: "ordinary loop and arithmetic names",
			src:  "for i in 1 2; do ls; done; let n=1; ((m++)); declare -n r=n; ls",
			cmds: []cmd{{Name: "ls", Assigns: none()}, {Name: "declare"}, {Name: "ls", Assigns: none()}},
		},
		{
			name: "a subshell keeps its variables",
			src:  "(read PATH); ls",
			cmds: []cmd{{Name: "read", Marks: []string{"dangerous_env:PATH"}}, {Name: "ls", Assigns: none(), NoMarks: []string{MarkDangerousEnv}}},
		},
		{
			name: "variables that make programs run others",
			src:  "TAR_OPTIONS=--to-command=sh tar xf a.tar; RSYNC_RSH=sh rsync a h:b; ZIPOPT=-TT zip a f; SUDO_EDITOR=sh sudoedit f; FCEDIT=sh fc; MANOPT=-Psh man ls; LESS=+!sh less f",
			cmds: []cmd{
				{Name: "tar", Marks: []string{"dangerous_env:TAR_OPTIONS"}},
				{Name: "rsync", Marks: []string{"dangerous_env:RSYNC_RSH"}},
				{Name: "zip", Marks: []string{"dangerous_env:ZIPOPT"}},
				{Name: "sudoedit", Marks: []string{"dangerous_env:SUDO_EDITOR"}},
				{Name: "fc", Dynamic: true, Marks: []string{"dangerous_env:FCEDIT"}},
				{Name: "man", Marks: []string{"dangerous_env:MANOPT"}},
				{Name: "less", Marks: []string{"dangerous_env:LESS"}},
			},
			dynamic: true,
			reasons: []string{"fc runs commands from the history"},
		},
	})
}
