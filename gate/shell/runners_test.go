package shell

import "testing"

func TestRunners(t *testing.T) {
	rm := func(via string, depth int) cmd {
		return cmd{Name: "rm", Paths: []string{"/"}, Via: []string{via}, Depth: depth}
	}
	runCases(t, []tcase{
		{
			name: "tmux shell commands of new sessions, windows and panes",
			src:  "tmux new -d 'rm -rf /'; tmux new-session -d -s x rm -rf /; tmux splitw -h -c / 'rm -rf .'; tmux new-w rm -rf /",
			cmds: []cmd{
				{Name: "tmux"}, rm("tmux new-session", 1),
				{Name: "tmux"}, rm("tmux new-session", 1),
				{Name: "tmux", Paths: []string{"/"}}, rm("tmux split-window", 1),
				{Name: "tmux"}, rm("tmux new-window", 1),
			},
		},
		{
			name: "tmux commands that run shell commands",
			src:  `tmux run-shell 'rm -rf /' \; if-shell true 'run "rm -rf /"' \; pipe-pane -o 'rm -rf /'; tmux -c 'rm -rf /'`,
			cmds: []cmd{
				{Name: "tmux"}, rm("tmux run-shell", 1), {Name: "true", Depth: 1}, rm("tmux run-shell", 1), rm("tmux pipe-pane", 1),
				{Name: "tmux"}, rm("tmux -c", 1),
			},
		},
		{
			name: "tmux keys typed into a pane",
			src:  "tmux send-keys -t x 'rm -rf /' Enter; tmux send rm Space -rf Space / C-m; tmux send -H 72 6d 20 2d 72 66 20 2f 0a; tmux send C-c",
			cmds: []cmd{
				{Name: "tmux"}, rm("tmux send-keys", 1),
				{Name: "tmux"}, rm("tmux send-keys", 1),
				{Name: "tmux"}, rm("tmux send-keys", 1),
				{Name: "tmux"},
			},
		},
		{
			name:    "tmux keys that edit the line",
			src:     "tmux send-keys 'rm -rf /x' BSpace Enter",
			cmds:    []cmd{{Name: "tmux", Dynamic: true}, {Name: "rm", Depth: 1, Paths: []string{"/x"}}},
			dynamic: true,
			reasons: []string{"tmux send-keys of a key that edits the line"},
		},
		{
			name: "tmux bindings, hooks, prompts, options and formats",
			src: `tmux bind-key x run-shell 'rm -rf /'; tmux set-hook -g after-new-window 'run-shell "rm -rf /"'; ` +
				`tmux confirm-before -p ok? 'run-shell "rm -rf /"'; tmux set -g default-command 'rm -rf /'; tmux display -p '#(rm -rf /)'`,
			cmds: []cmd{
				{Name: "tmux"}, rm("tmux run-shell", 1),
				{Name: "tmux"}, rm("tmux run-shell", 1),
				{Name: "tmux"}, rm("tmux run-shell", 1),
				{Name: "tmux", Marks: []string{"exec_flag:tmux default-command"}}, rm("tmux default-command", 1),
				{Name: "tmux", Marks: []string{"exec_flag:tmux #()"}}, rm("tmux #()", 1),
			},
		},
		{
			name: "tmux buffers, sources and environment",
			src:  `tmux set-buffer 'rm -rf /' \; paste-buffer; tmux source-file x.conf; tmux setenv -g LD_PRELOAD /x.so`,
			cmds: []cmd{
				{Name: "tmux", Marks: []string{"exec_flag:tmux paste-buffer"}}, rm("tmux set-buffer", 1),
				{Name: "tmux", Marks: []string{"runs_script:/ws/x.conf"}},
				{Name: "tmux", Marks: []string{"dangerous_env:LD_PRELOAD"}},
			},
		},
		{
			name: "tmux commands that run nothing",
			src:  "tmux ls; tmux attach -t x; tmux kill-session -t x; tmux new -d; tmux send-keys -X cancel",
			cmds: []cmd{
				{Name: "tmux", Paths: none(), Marks: []string{}}, {Name: "tmux", Marks: []string{}}, {Name: "tmux", Marks: []string{}},
				{Name: "tmux", Marks: []string{}}, {Name: "tmux", Marks: []string{}},
			},
		},
		{
			name:    "tmux command strings that are not understood",
			src:     `tmux bind x 'run-shell "$CMD"'`,
			cmds:    []cmd{{Name: "tmux", Dynamic: true}},
			dynamic: true,
		},
		{
			name: "screen",
			src:  "screen -dm sh -c 'rm -rf /'; screen -dmS x rm -rf /; screen -S x -X stuff 'rm -rf /^M'; screen -X exec rm -rf /; screen -ls; screen -r x; screen -X quit",
			cmds: []cmd{
				{Name: "screen"}, {Name: "sh", Depth: 1}, {Name: "rm", Depth: 2, Paths: []string{"/"}},
				{Name: "screen"}, rm("screen", 1),
				{Name: "screen"}, rm("screen stuff", 1),
				{Name: "screen"}, rm("screen exec", 1),
				{Name: "screen"}, {Name: "screen"}, {Name: "screen", Marks: []string{}},
			},
		},
		{
			name: "screen commands that may run something",
			src:  "screen -X source f; screen -c rc",
			cmds: []cmd{{Name: "screen", Marks: []string{"exec_flag:screen -X source"}}, {Name: "screen", Marks: []string{"runs_script:/ws/rc"}}},
		},
		{
			name: "nix-shell and nix",
			src:  "nix-shell --run 'rm -rf /'; nix-shell -p hello --command 'rm -rf /'; nix develop -c rm -rf /; nix shell nixpkgs#hello --command hello",
			cmds: []cmd{
				{Name: "nix-shell", Marks: []string{"exec_flag:nix-shell"}}, rm("nix-shell --run", 1),
				{Name: "nix-shell"}, rm("nix-shell --command", 1),
				{Name: "nix", Marks: []string{"exec_flag:nix develop"}}, rm("nix develop", 1),
				{Name: "nix"}, {Name: "hello", Depth: 1},
			},
		},
	})
}

func TestInterpreters(t *testing.T) {
	rm := func(via string, depth int) cmd {
		return cmd{Name: "rm", Paths: []string{"/"}, Via: []string{via}, Depth: depth}
	}
	// a command run from a program read on stdin shares that stdin
	piped := func(via string) cmd {
		c := rm(via, 1)
		c.Stdin = "pipe"
		return c
	}
	runCases(t, []tcase{
		{
			name: "shells under other names",
			src:  "lksh -c 'rm -rf /'; ksh93 -c 'rm -rf /'; bash-static -c 'rm -rf /'; zsh-5.9 -c 'rm -rf /'; busybox hush -c 'rm -rf /'",
			cmds: []cmd{
				{Name: "lksh", Marks: []string{"interpreter"}}, rm("lksh -c", 1),
				{Name: "ksh93"}, rm("ksh93 -c", 1),
				{Name: "bash-static"}, rm("bash-static -c", 1),
				{Name: "zsh-5.9"}, rm("zsh-5.9 -c", 1),
				{Name: "hush", Via: []string{"busybox"}}, {Name: "rm", Paths: []string{"/"}, Depth: 1},
			},
		},
		{
			name: "pwsh command, abbreviated and encoded",
			src:  "pwsh -Comm 'rm -rf /'; pwsh -enc cgBtACAALQByAGYAIAAvAA==",
			cmds: []cmd{
				{Name: "pwsh", Marks: []string{"inline_code:pwsh -Comm"}}, rm("pwsh -c", 1),
				{Name: "pwsh", Marks: []string{"inline_code:pwsh -enc"}}, rm("pwsh -EncodedCommand", 1),
			},
		},
		{
			name: "dc runs the rest of a line after !",
			src:  "dc -e '!rm -rf /'; dc -e '[!rm -rf /]x'; dc -e '1 2 !<a p'; dc x.dc; echo '!rm -rf /' | dc",
			cmds: []cmd{
				{Name: "dc", Marks: []string{"inline_code:dc -e", "exec_flag:dc !"}}, rm("dc !", 1),
				{Name: "dc"}, rm("dc !", 1),
				{Name: "dc", Marks: []string{"inline_code:dc -e"}, NoMarks: []string{MarkExecFlag}},
				{Name: "dc", Marks: []string{"runs_script:/ws/x.dc"}},
				{Name: "echo"}, {Name: "dc", Stdin: "pipe", Marks: []string{"stdin_shell:pipe"}}, piped("dc !"),
			},
		},
		{
			name: "sqlite3 dot-commands",
			src: `sqlite3 db '.shell rm -rf /'; sqlite3 -cmd '.system rm -rf /' db; sqlite3 db ".output '|rm -rf /'"; ` +
				`echo '.shell rm -rf /' | sqlite3 db; sqlite3 db '.load ./x.so'`,
			cmds: []cmd{
				{Name: "sqlite3", Paths: []string{"/ws/db"}, Marks: []string{"exec_flag:sqlite3 .shell"}}, rm("sqlite3 .shell", 1),
				{Name: "sqlite3", Marks: []string{"exec_flag:sqlite3 .system"}}, rm("sqlite3 .system", 1),
				{Name: "sqlite3", Marks: []string{"exec_flag:sqlite3 .output"}}, rm("sqlite3 .output", 1),
				{Name: "echo"}, {Name: "sqlite3", Stdin: "pipe", Marks: []string{"stdin_shell:pipe", "exec_flag:sqlite3 .shell"}}, piped("sqlite3 .shell"),
				{Name: "sqlite3", Marks: []string{"exec_flag:sqlite3 .load", "runs_script:/ws/x.so"}},
			},
		},
		{
			name: "sqlite3 queries",
			src:  "sqlite3 db 'select 1'; sqlite3 db .tables .schema; sqlite3 db \"select writefile('/tmp/x', 'y')\"; sqlite3 db < q.sql",
			cmds: []cmd{
				{Name: "sqlite3", Paths: []string{"/ws/db"}, NoMarks: []string{MarkExecFlag, MarkStdinShell}},
				{Name: "sqlite3", NoMarks: []string{MarkExecFlag}},
				{Name: "sqlite3", Marks: []string{"exec_flag:sqlite3 writefile"}},
				{Name: "sqlite3", Stdin: "file", Marks: []string{"runs_script:/ws/q.sql"}},
			},
		},
		{
			name: "m4 input is a program",
			src:  "m4 x.m4; echo 'esyscmd(rm -rf /)' | m4; m4 -D 'X=syscmd(rm -rf /)' x.m4",
			cmds: []cmd{
				{Name: "m4", Marks: []string{"runs_script:/ws/x.m4"}},
				{Name: "echo"}, {Name: "m4", Stdin: "pipe", Marks: []string{"stdin_shell:pipe", "exec_flag:m4 syscmd"}}, piped("m4 syscmd"),
				{Name: "m4", Marks: []string{"inline_code:m4 -D", "runs_script:/ws/x.m4"}}, rm("m4 syscmd", 1),
			},
		},
		{
			name: "emacs long options abbreviated",
			src:  "emacs --ev '(x)'; emacs --batch --e '(x)'; emacs -e kill-emacs; emacs --lo x.el; emacsclient --ev '(x)'",
			cmds: []cmd{
				{Name: "emacs", Marks: []string{"inline_code:emacs --eval"}},
				{Name: "emacs", Marks: []string{"inline_code:emacs --eval"}},
				{Name: "emacs", Marks: []string{"inline_code:emacs -e"}},
				{Name: "emacs", Marks: []string{"runs_script:/ws/x.el"}},
				{Name: "emacsclient", Marks: []string{"inline_code:emacsclient --eval"}},
			},
		},
		{
			name: "gdb options abbreviated and shell commands",
			src:  "gdb -eval-comm '!rm -rf /'; gdb --eval-comm='she rm -rf /'; gdb -batch -ex 'pipe bt | rm -rf /'; echo 'shell rm -rf /' | gdb",
			cmds: []cmd{
				{Name: "gdb", Marks: []string{"exec_flag:gdb -ex"}}, rm("gdb -ex !", 1),
				{Name: "gdb"}, rm("gdb -ex shell", 1),
				{Name: "gdb"}, rm("gdb -ex pipe", 1),
				{Name: "echo"}, {Name: "gdb", Stdin: "pipe", Marks: []string{"stdin_shell:pipe"}}, piped("gdb -ex shell"),
			},
		},
		{
			name: "ed runs what follows a !",
			src:  "echo '!rm -rf /' | ed; ed f <<'EOF'\nr !rm -rf /\nw\nEOF\ned -s f <<< ',s/a/b/g'; cat cmds | ed f; red f <<< '!id'",
			cmds: []cmd{
				{Name: "echo"}, {Name: "ed", Stdin: "pipe", Marks: []string{"exec_flag:ed !"}}, piped("ed !"),
				{Name: "ed", Stdin: "heredoc", Writes: []string{"/ws/f"}, Marks: []string{"exec_flag:ed !"}}, {Name: "rm", Depth: 1, Stdin: "heredoc", Paths: []string{"/"}},
				{Name: "ed", Stdin: "herestring", Marks: []string{}},
				{Name: "cat"}, {Name: "ed", Stdin: "pipe", Marks: []string{"stdin_shell:pipe"}},
				{Name: "red", Stdin: "herestring", Marks: []string{}},
			},
		},
		{
			name: "vim in Ex mode reads commands, vim -s types keys",
			src:  "echo '!rm -rf /' | vim -es; vim -s keys.txt f.txt",
			cmds: []cmd{
				{Name: "echo"}, {Name: "vim", Stdin: "pipe", Marks: []string{"stdin_shell:pipe"}}, piped("vim !"),
				{Name: "vim", Marks: []string{"exec_flag:vim -s", "runs_script:/ws/keys.txt"}},
			},
		},
		{
			name: "sqlite3 dot-commands abbreviated and quoted",
			src:  `sqlite3 db '.sh rm -rf /'; sqlite3 db '.sy rm -rf /'; sqlite3 db ".once '|sh -c \"rm -rf /\"'"`,
			cmds: []cmd{
				{Name: "sqlite3", Marks: []string{"exec_flag:sqlite3 .shell"}}, rm("sqlite3 .shell", 1),
				{Name: "sqlite3", Marks: []string{"exec_flag:sqlite3 .system"}}, rm("sqlite3 .system", 1),
				{Name: "sqlite3", Marks: []string{"exec_flag:sqlite3 .once"}}, {Name: "sh", Depth: 1}, {Name: "rm", Depth: 2, Paths: []string{"/"}},
			},
		},
		{
			name: "vim Ex commands that run shell commands",
			src:  "vim -c 'r !rm -rf /'; vim -c 'set nu | silent !rm -rf /'; ex -c 'terminal rm -rf /'; vim -c 'w! out'",
			cmds: []cmd{
				{Name: "vim"}, rm("vim -c !", 1),
				{Name: "vim"}, rm("vim -c !", 1),
				{Name: "ex"}, rm("ex -c !", 1),
				{Name: "vim", Marks: []string{"exec_flag:vim -c"}},
			},
		},
	})
}

func TestVimShell(t *testing.T) {
	for _, tc := range []struct {
		name, line, want string
		ok               bool
	}{
		{name: "bang", line: "!id", want: "id", ok: true},
		{name: "colon and range", line: ":%!sort", want: "sort", ok: true},
		{name: "read", line: "r !id", want: "id", ok: true},
		{name: "read glued", line: "read!id", want: "id", ok: true},
		{name: "write to a command", line: "w !sh", want: "sh", ok: true},
		{name: "forced write", line: "w! out"},
		{name: "silent", line: "silent !id", want: "id", ok: true},
		{name: "silent bang", line: "silent! !id", want: "id", ok: true},
		{name: "terminal", line: "term id", want: "id", ok: true},
		{name: "after a bar", line: "set nu | !id", want: "id", ok: true},
		{name: "no shell", line: "set nu | q!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := vimShell(tc.line)
			if got != tc.want || ok != tc.ok {
				t.Errorf("vimShell(%q) = %q, %v; want %q, %v", tc.line, got, ok, tc.want, tc.ok)
			}
		})
	}
}
