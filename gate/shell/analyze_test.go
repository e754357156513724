package shell

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var testOpts = Options{Cwd: "/ws", Home: "/home/u"}

// cmd is the expectation for one Command. Name, Depth, Stdin and Dynamic
// are always compared; a nil slice is not checked, an empty one must be
// empty. Marks lists "kind" or "kind:detail" that must be present; NoMarks
// lists kinds that must be absent.
type cmd struct {
	Name     string
	Argv     []string
	Opts     []string
	Operands []string
	Paths    []string
	Writes   []string
	Assigns  []string
	Via      []string
	Depth    int
	Stdin    string
	Dynamic  bool
	Function bool
	Marks    []string
	NoMarks  []string
}

// tcase is one analysis expectation. Cmds, when not nil, must match the
// commands in order and in number. Reasons must all be present.
type tcase struct {
	name      string
	src       string
	opts      *Options
	cmds      []cmd
	dynamic   bool
	reasons   []string
	forkBomb  bool
	network   []string
	redirects []Redirect
	err       string // prefix of Analysis.Error; "" means none
}

func runCases(t *testing.T, cases []tcase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOpts
			if tc.opts != nil {
				opts = *tc.opts
			}
			got := Analyze(tc.src, opts)
			checkAnalysis(t, tc, got)
		})
	}
}

func checkAnalysis(t *testing.T, tc tcase, got *Analysis) {
	t.Helper()
	dump := func() string {
		b, _ := json.MarshalIndent(got, "", "  ")
		return string(b)
	}
	if tc.err == "" && got.Error != "" || tc.err != "" && !strings.HasPrefix(got.Error, tc.err) {
		t.Fatalf("Error = %q, want prefix %q\n%s", got.Error, tc.err, dump())
	}
	if got.Dynamic != tc.dynamic {
		t.Errorf("Dynamic = %v, want %v (reasons %q)", got.Dynamic, tc.dynamic, got.DynamicReasons)
	}
	for _, r := range tc.reasons {
		if !slices.Contains(got.DynamicReasons, r) {
			t.Errorf("DynamicReasons = %q, want it to contain %q", got.DynamicReasons, r)
		}
	}
	if got.ForkBomb != tc.forkBomb {
		t.Errorf("ForkBomb = %v, want %v", got.ForkBomb, tc.forkBomb)
	}
	if tc.network != nil && !slices.Equal(got.Network, tc.network) {
		t.Errorf("Network = %q, want %q", got.Network, tc.network)
	}
	if tc.redirects != nil && !slices.Equal(got.Redirects, tc.redirects) {
		t.Errorf("Redirects = %+v, want %+v", got.Redirects, tc.redirects)
	}
	if tc.cmds == nil {
		return
	}
	if len(got.Commands) != len(tc.cmds) {
		var names []string
		for _, c := range got.Commands {
			names = append(names, c.Name)
		}
		t.Fatalf("got %d commands %q, want %d\n%s", len(got.Commands), names, len(tc.cmds), dump())
	}
	for i, w := range tc.cmds {
		g := got.Commands[i]
		pre := func(f string) string { return "command " + strconv.Itoa(i) + " (" + g.Name + ") " + f }
		if g.Name != w.Name {
			t.Errorf("%s = %q, want %q", pre("Name"), g.Name, w.Name)
		}
		if g.Depth != w.Depth {
			t.Errorf("%s = %d, want %d", pre("Depth"), g.Depth, w.Depth)
		}
		if g.Stdin != w.Stdin {
			t.Errorf("%s = %q, want %q", pre("Stdin"), g.Stdin, w.Stdin)
		}
		if g.Dynamic != w.Dynamic {
			t.Errorf("%s = %v, want %v", pre("Dynamic"), g.Dynamic, w.Dynamic)
		}
		if g.Function != w.Function {
			t.Errorf("%s = %v, want %v", pre("Function"), g.Function, w.Function)
		}
		for _, f := range []struct {
			name      string
			got, want []string
		}{
			{"Argv", g.Argv, w.Argv}, {"Opts", g.Opts, w.Opts}, {"Operands", g.Operands, w.Operands},
			{"Paths", g.Paths, w.Paths}, {"Writes", g.Writes, w.Writes}, {"Assigns", g.Assigns, w.Assigns},
			{"Via", g.Via, w.Via},
		} {
			if f.want != nil && !slices.Equal(f.got, f.want) {
				t.Errorf("%s = %q, want %q", pre(f.name), f.got, f.want)
			}
		}
		for _, m := range w.Marks {
			if !hasMarkSpec(g.Marks, m) {
				t.Errorf("%s = %v, want %q", pre("Marks"), g.Marks, m)
			}
		}
		for _, k := range w.NoMarks {
			if hasMarkSpec(g.Marks, k) {
				t.Errorf("%s = %v, want no %q", pre("Marks"), g.Marks, k)
			}
		}
	}
	if t.Failed() {
		t.Log(dump())
	}
}

func dumpJSON(a *Analysis) string {
	b, _ := json.MarshalIndent(a, "", "  ")
	return string(b)
}

func hasMarkSpec(ms []Mark, spec string) bool {
	kind, detail, withDetail := strings.Cut(spec, ":")
	for _, m := range ms {
		if m.Kind == kind && (!withDetail || m.Detail == detail) {
			return true
		}
	}
	return false
}

func none() []string { return []string{} }

func TestStructure(t *testing.T) {
	runCases(t, []tcase{
		{
			name: "pipeline and lists",
			src:  "a | b && c || d; e & f\ng",
			cmds: []cmd{
				{Name: "a"}, {Name: "b", Stdin: "pipe"}, {Name: "c"}, {Name: "d"}, {Name: "e"}, {Name: "f"}, {Name: "g"},
			},
		},
		{
			name: "pipe all",
			src:  "a |& b",
			cmds: []cmd{{Name: "a"}, {Name: "b", Stdin: "pipe"}},
		},
		{
			name: "subshell and brace group",
			src:  "(a; b) && { c; d; }",
			cmds: []cmd{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}},
		},
		{
			name: "command substitution and backticks run first",
			src:  "x $(a `b`)",
			cmds: []cmd{
				{Name: "b", Depth: 2, Via: []string{"$()", "``"}},
				{Name: "a", Depth: 1, Via: []string{"$()"}, Dynamic: true},
				{Name: "x", Depth: 0, Via: none(), Dynamic: true},
			},
			dynamic: true,
			reasons: []string{"path from expansion in a", "path from expansion in x"},
		},
		{
			name: "process substitution",
			src:  "diff <(a) >(b)",
			cmds: []cmd{
				{Name: "a", Depth: 1, Via: []string{"<()"}},
				{Name: "b", Depth: 1, Via: []string{">()"}, Stdin: "pipe"},
				{Name: "diff", Operands: []string{"<(a)", ">(b)"}, Paths: none()},
			},
		},
		{
			name: "substitution in assignment",
			src:  "x=$(a) y",
			cmds: []cmd{{Name: "a", Depth: 1, Via: []string{"$()"}}, {Name: "y", Assigns: []string{"x"}}},
		},
		{
			name: "pure assignment runs only its substitution",
			src:  "x=$(a)",
			cmds: []cmd{{Name: "a", Depth: 1}},
		},
		{
			name: "function body where defined and at each call, with the program of its name",
			src:  "f() { g; }; f; f",
			cmds: []cmd{{Name: "g", Stdin: "pipe"}, {Name: "g"}, {Name: "f", Function: true}, {Name: "g"}, {Name: "f", Function: true}},
		},
		{
			name: "function keyword",
			src:  "function f { g; }",
			cmds: []cmd{{Name: "g", Stdin: "pipe"}},
		},
		{
			name: "call before definition is a command",
			src:  "f; f() { g; }",
			cmds: []cmd{{Name: "f"}, {Name: "g", Stdin: "pipe"}},
		},
		{
			name: "if elif else",
			src:  "if a; then b; elif c; then d; else e; fi",
			cmds: []cmd{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}, {Name: "e"}},
		},
		{
			name: "while and until",
			src:  "while a; do b; done; until c; do d; done",
			cmds: []cmd{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}},
		},
		{
			name: "for loops",
			src:  "for i in $(a); do b; done; for ((i=0; i<$(c); i++)); do d; done",
			cmds: []cmd{{Name: "a", Depth: 1}, {Name: "b"}, {Name: "c", Depth: 1}, {Name: "d"}},
			// i takes words of a's output; c's output is evaluated.
			dynamic: true,
			reasons: []string{"arithmetic on $i, which is not a plain integer", "command output evaluated as arithmetic"},
		},
		{
			name: "case",
			src:  "case $(a) in x) b;; $(c)) d;; esac",
			cmds: []cmd{{Name: "a", Depth: 1}, {Name: "b"}, {Name: "c", Depth: 1}, {Name: "d"}},
		},
		{
			name:    "arithmetic command, test clause, let",
			src:     "(( $(a) + 1 )); [[ -f $(b) ]]; let x=$(c)",
			cmds:    []cmd{{Name: "a", Depth: 1}, {Name: "b", Depth: 1}, {Name: "c", Depth: 1}},
			dynamic: true,
			reasons: []string{"command output evaluated as arithmetic"},
		},
		{
			name: "coprocess",
			src:  "coproc c { a; }; coproc b",
			cmds: []cmd{{Name: "a"}, {Name: "b"}},
		},
		{
			name: "time keyword",
			src:  "time -p a | b",
			cmds: []cmd{{Name: "a"}, {Name: "b", Stdin: "pipe"}},
		},
		{
			name: "negation",
			src:  "! a && b",
			cmds: []cmd{{Name: "a"}, {Name: "b"}},
		},
		{
			name: "comment tail is not a command",
			src:  "ls # ; rm -rf /",
			cmds: []cmd{{Name: "ls"}},
		},
		{
			name: "newline separated",
			src:  "ls\nrm -rf /",
			cmds: []cmd{{Name: "ls"}, {Name: "rm", Paths: []string{"/"}}},
		},
		{
			name: "declare and export are commands",
			src:  "declare -x A=$(a); export B=1; c",
			cmds: []cmd{
				{Name: "a", Depth: 1},
				{Name: "declare", Opts: []string{"x"}, Assigns: []string{"A"}},
				{Name: "export", Assigns: []string{"B"}},
				{Name: "c", Assigns: []string{"A", "B"}},
			},
		},
		{
			name: "redirect only",
			src:  "> out",
			cmds: []cmd{},
			redirects: []Redirect{
				{Op: ">", Target: "/ws/out", Write: true},
			},
		},
		{
			name: "empty",
			src:  "",
			cmds: []cmd{},
		},
	})
}

func TestExpansion(t *testing.T) {
	runCases(t, []tcase{
		{
			name: "brace expansion",
			src:  "{rm,-rf,/}",
			cmds: []cmd{{Name: "rm", Argv: []string{"rm", "-rf", "/"}, Opts: []string{"r", "f"}, Paths: []string{"/"}}},
		},
		{
			name: "brace sequence",
			src:  "echo a{1..3}",
			cmds: []cmd{{Name: "echo", Argv: []string{"echo", "a1", "a2", "a3"}}},
		},
		{
			name: "ANSI-C quotes",
			src:  `$'\x72\x6d' -rf /`,
			cmds: []cmd{{Name: "rm", Argv: []string{"rm", "-rf", "/"}}},
		},
		{
			name: "backslash",
			src:  `\rm -rf /`,
			cmds: []cmd{{Name: "rm", Argv: []string{"rm", "-rf", "/"}}},
		},
		{
			name: "quote removal",
			src:  `"r"m -rf /; r''m x`,
			cmds: []cmd{{Name: "rm"}, {Name: "rm", Argv: []string{"rm", "x"}}},
		},
		{
			name: "tilde",
			src:  "ls ~ ~/x a~ '~' \"~/y\" ~root/z",
			cmds: []cmd{{
				Name:     "ls",
				Operands: []string{"/home/u", "/home/u/x", "a~", "~", "~/y", "/root/z"},
				Paths:    []string{"/home/u", "/home/u/x", "/ws/a~", "/ws/~", "/ws/~/y", "/root/z"},
			}},
		},
		{
			name: "tilde of another user is guessed, not looked up",
			src:  "ls ~bob/x",
			cmds: []cmd{{Name: "ls", Paths: []string{"/home/bob/x"}}},
		},
		{
			name: "tilde after = of an assignment-like argument",
			src:  "dd of=~/disk",
			cmds: []cmd{{Name: "dd", Writes: []string{"/home/u/disk"}}},
		},
		{
			name: "tilde without home stays literal",
			src:  "ls ~/x",
			opts: &Options{Cwd: "/ws"},
			cmds: []cmd{{Name: "ls", Paths: []string{"/ws/~/x"}}},
		},
		{
			name: "glob operands are kept as written",
			src:  "rm -rf *.o build/*",
			cmds: []cmd{{Name: "rm", Operands: []string{"*.o", "build/*"}, Paths: []string{"/ws/*.o", "/ws/build/*"}}},
		},
		{
			name: "path of the program",
			src:  "/bin/rm -rf /",
			cmds: []cmd{{Name: "rm", Argv: []string{"/bin/rm", "-rf", "/"}, NoMarks: []string{MarkRunsScript}}},
		},
		{
			name: "program outside the system directories",
			src:  "/tmp/cat x; ./build.sh; bin/tool",
			cmds: []cmd{
				{Name: "cat", Marks: []string{"runs_script:/tmp/cat"}},
				{Name: "build.sh", Marks: []string{"runs_script:/ws/build.sh"}},
				{Name: "tool", Marks: []string{"runs_script:/ws/bin/tool"}},
			},
		},
	})
}

func TestDynamic(t *testing.T) {
	runCases(t, []tcase{
		{
			name:    "variable as command name",
			src:     "X=rm; $X -rf /",
			cmds:    []cmd{{Name: "", Argv: []string{"$X", "-rf", "/"}, Dynamic: true, Paths: []string{"/"}}},
			dynamic: true,
			reasons: []string{"command name from variable $X"},
		},
		{
			name:    "unset variable does not make -rf the command",
			src:     "$X -rf /",
			cmds:    []cmd{{Name: "", Argv: []string{"$X", "-rf", "/"}, Dynamic: true}},
			dynamic: true,
		},
		{
			name:    "braced variable",
			src:     "${CMD} x",
			cmds:    []cmd{{Name: "", Dynamic: true}},
			dynamic: true,
			reasons: []string{"command name from variable $CMD"},
		},
		{
			name:    "command substitution as command name",
			src:     "$(echo rm) -rf /",
			cmds:    []cmd{{Name: "echo", Depth: 1}, {Name: "", Dynamic: true}},
			dynamic: true,
			reasons: []string{"command substitution as command name"},
		},
		{
			name:    "backticks as command name",
			src:     "`echo rm` -rf /",
			cmds:    []cmd{{Name: "echo", Depth: 1, Via: []string{"``"}}, {Name: "", Dynamic: true}},
			dynamic: true,
			reasons: []string{"command substitution as command name"},
		},
		{
			name:    "arithmetic as command name",
			src:     "$((1+1)) x",
			cmds:    []cmd{{Name: "", Dynamic: true}},
			dynamic: true,
			reasons: []string{"arithmetic expansion as command name"},
		},
		{
			name:    "glob as command name",
			src:     "/???/r? -rf /",
			cmds:    []cmd{{Name: "", Dynamic: true, NoMarks: []string{MarkRunsScript}}},
			dynamic: true,
			reasons: []string{"glob in command name"},
		},
		{
			name:    "bracket glob as command name",
			src:     "/bin/r[m] -rf /",
			cmds:    []cmd{{Name: "", Dynamic: true}},
			dynamic: true,
			reasons: []string{"glob in command name"},
		},
		{
			name: "[ is not a glob",
			src:  "[ -f x ]",
			cmds: []cmd{{Name: "[", Paths: []string{"/ws/x"}}},
		},
		{
			name: "quoted glob is not a glob",
			src:  `"/???/r?" x`,
			cmds: []cmd{{Name: "r?"}},
		},
		{
			name: "variable operand of a harmless command stays static",
			src:  `echo "$HOME" $X; grep "$PAT" file`,
			cmds: []cmd{
				{Name: "echo", Operands: []string{`"$HOME"`, "$X"}},
				{Name: "grep", Paths: []string{"/ws/file"}},
			},
		},
		{
			name:    "quoted $HOME in a path",
			src:     `cat "$HOME"/.ssh/id_rsa`,
			cmds:    []cmd{{Name: "cat", Dynamic: true, Paths: []string{"/home/u/.ssh/id_rsa"}}},
			dynamic: true,
		},
		{
			name:    "non-ASCII command name",
			src:     "ｓｕｄｏ ls; rм -rf /",
			cmds:    []cmd{{Name: "ｓｕｄｏ", Dynamic: true}, {Name: "rм", Dynamic: true}},
			dynamic: true,
			reasons: []string{"non-ASCII or blank characters in command name"},
		},
		{
			name:    "invisible and bidirectional characters",
			src:     "echo safe\u202e; ls",
			dynamic: true,
			reasons: []string{"invisible or bidirectional control characters"},
		},
		{
			name:    "variable path operand is dynamic",
			src:     `cat "$F"`,
			cmds:    []cmd{{Name: "cat", Dynamic: true, Paths: []string{`/ws/"$F"`}}},
			dynamic: true,
			reasons: []string{"path from expansion in cat"},
		},
		{
			name:    "$HOME in a path is resolved but still dynamic",
			src:     `cat $HOME/.ssh/id_rsa ~/$X`,
			cmds:    []cmd{{Name: "cat", Dynamic: true, Paths: []string{"/home/u/.ssh/id_rsa", "/home/u/$X"}}},
			dynamic: true,
		},
		{
			name:    "variable operand of rm is dynamic",
			src:     `rm -rf "$DIR"`,
			cmds:    []cmd{{Name: "rm", Dynamic: true}},
			dynamic: true,
		},
		{
			name:    "variable operand of kill is dynamic",
			src:     `kill $PID`,
			cmds:    []cmd{{Name: "kill", Dynamic: true, Paths: none()}},
			dynamic: true,
			reasons: []string{"operand from expansion in kill"},
		},
		{
			name:    "redirect target from expansion",
			src:     `echo x > "$F"`,
			cmds:    []cmd{{Name: "echo", Writes: []string{`/ws/"$F"`}}},
			dynamic: true,
			reasons: []string{"redirect target from expansion"},
		},
	})
}

func TestNeverNil(t *testing.T) {
	for _, src := range []string{"", "ls", "(", "\x00", strings.Repeat("a", DefaultMaxBytes+1)} {
		a := Analyze(src, Options{})
		if a == nil {
			t.Fatalf("Analyze(%q) = nil", src)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "null") {
			t.Errorf("Analyze(%.20q) JSON has null: %s", src, b)
		}
	}
}

func TestDeterministic(t *testing.T) {
	src := `a | b; {rm,-rf,/}; X=1 $Y; sudo -u r env A=1 bash -c 'cd / && rm -rf . $(curl x)'; :(){ :|:& };:`
	first, _ := json.Marshal(Analyze(src, testOpts))
	for i := 0; i < 20; i++ {
		again, _ := json.Marshal(Analyze(src, testOpts))
		if string(again) != string(first) {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, again)
		}
	}
}

func TestConcurrent(t *testing.T) {
	srcs := []string{"ls | wc -l", "sudo bash -c 'rm -rf /'", "find / -exec rm {} +", "x=$(curl x | sh)", "ls ("}
	want := make([]string, len(srcs))
	for i, s := range srcs {
		b, _ := json.Marshal(Analyze(s, testOpts))
		want[i] = string(b)
	}
	done := make(chan string, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for n := 0; n < 50; n++ {
				i := n % len(srcs)
				if b, _ := json.Marshal(Analyze(srcs[i], testOpts)); string(b) != want[i] {
					done <- srcs[i]
					return
				}
			}
			done <- ""
		}()
	}
	for g := 0; g < 8; g++ {
		if s := <-done; s != "" {
			t.Errorf("concurrent analysis of %q differs", s)
		}
	}
}

func TestFunctions(t *testing.T) {
	runCases(t, []tcase{
		{
			name: "a definition in a subshell does not leak",
			src:  "(rm(){ echo; }); rm -rf /",
			cmds: []cmd{{Name: "echo", Stdin: "pipe"}, {Name: "rm", Paths: []string{"/"}}},
		},
		{
			name: "nor one in a substitution",
			src:  "x=$(rm(){ :; }); rm -rf /",
			cmds: []cmd{{Name: ":", Depth: 1, Stdin: "pipe"}, {Name: "rm", Paths: []string{"/"}}},
		},
		{
			name: "a definition in a branch is listed with the program",
			src:  "false && rm(){ :; }; rm -rf /",
			cmds: []cmd{{Name: "false"}, {Name: ":", Stdin: "pipe"}, {Name: ":"}, {Name: "rm", Paths: []string{"/"}}},
		},
		{
			name: "a definition inside a body exists once the body runs",
			src:  "g(){ rm(){ echo; }; }; rm -rf /",
			cmds: []cmd{{Name: "echo", Stdin: "pipe"}, {Name: "rm", Paths: []string{"/"}}},
		},
		{
			name: "command skips the function",
			src:  "rm(){ echo; }; command rm -rf /",
			cmds: []cmd{{Name: "echo", Stdin: "pipe"}, {Name: "rm", Via: []string{"command"}, Paths: []string{"/"}}},
		},
		{
			name: "unset -f removes the function",
			src:  "f(){ g; }; unset -f f; f",
			cmds: []cmd{{Name: "g", Stdin: "pipe"}, {Name: "unset"}, {Name: "f"}},
		},
		{
			name: "unset -f in a branch may not run",
			src:  "f(){ g; }; false && unset -f f; f",
			cmds: []cmd{{Name: "g", Stdin: "pipe"}, {Name: "false"}, {Name: "unset"}, {Name: "g"}, {Name: "f"}},
		},
		{
			name: "the body runs in the caller's directory",
			src:  "f(){ rm -rf x; }; cd /tmp && f",
			cmds: []cmd{{Name: "rm", Stdin: "pipe", Paths: []string{"/ws/x"}}, {Name: "cd"}, {Name: "rm", Paths: []string{"/tmp/x"}}, {Name: "f", Function: true}},
		},
		{
			name: "exports of the body carry over",
			src:  "f(){ export PATH=/tmp; }; f; ls",
			cmds: []cmd{{Name: "export", Stdin: "pipe"}, {Name: "export"}, {Name: "f", Function: true}, {Name: "ls", Marks: []string{"dangerous_env:PATH"}}},
		},
		{
			name: "a call in a subshell or a pipeline surely runs the function",
			src:  "f(){ ls; }; (f); f | cat",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f", Function: true}, {Name: "ls"}, {Name: "f", Function: true}, {Name: "cat", Stdin: "pipe"}},
		},
		{
			name: "a definition in a loop may not run",
			src:  "while false; do f(){ ls; }; done; f",
			cmds: []cmd{{Name: "false"}, {Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f"}},
		},
		{
			name: "a definition in a loop replacing a sure one leaves a function",
			src:  "f(){ ls; }; while false; do f(){ id; }; done; f",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "false"}, {Name: "id", Stdin: "pipe"}, {Name: "id"}, {Name: "ls"}, {Name: "f", Function: true}},
		},
		{
			name: "plain unset removes a function when no variable has the name",
			src:  "f(){ ls; }; unset f; f",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "unset"}, {Name: "ls"}, {Name: "f"}},
		},
		{
			name: "unset -v removes only variables",
			src:  "f(){ ls; }; unset -v f; f",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "unset"}, {Name: "ls"}, {Name: "f", Function: true}},
		},
		{
			name:    "an unset of names not known removes any",
			src:     "f(){ ls; }; unset -f $x; f",
			cmds:    []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "unset", Dynamic: true}, {Name: "ls"}, {Name: "f"}},
			dynamic: true,
		},
		{
			name: "a body that unsets its own function",
			src:  "f(){ unset -f f; }; f; f",
			cmds: []cmd{{Name: "unset", Stdin: "pipe"}, {Name: "unset"}, {Name: "f", Function: true}, {Name: "unset"}, {Name: "f"}},
		},
		{
			name: "redefined after unset -f",
			src:  "f(){ ls; }; unset -f f; f(){ id; }; f",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "unset"}, {Name: "id", Stdin: "pipe"}, {Name: "id"}, {Name: "f", Function: true}},
		},
		{
			name: "after a trap the function may be gone",
			src:  "trap 'unset -f rm' DEBUG; rm(){ :; }; rm -rf /",
			cmds: []cmd{{Name: "trap"}, {Name: "unset", Depth: 1}, {Name: ":", Stdin: "pipe"}, {Name: ":"}, {Name: "rm", Paths: []string{"/"}}},
		},
		{
			name: "a function named unset that may be absent lets the builtin remove",
			src:  "if x; then unset(){ :; }; fi; rm(){ :; }; unset -f rm; rm",
			cmds: []cmd{{Name: "x"}, {Name: ":", Stdin: "pipe"}, {Name: ":", Stdin: "pipe"}, {Name: ":"}, {Name: "unset"}, {Name: ":"}, {Name: "rm"}},
		},
		{
			name: "a later iteration of a loop may find the function removed",
			src:  "f(){ ls; }; for i in 1 2; do f; unset -f f; done",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f"}, {Name: "unset"}},
		},
		{
			name: "or a trap set after the call",
			src:  "f(){ ls; }; while f; do trap 'unset -f f' DEBUG; done",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f"}, {Name: "trap"}, {Name: "unset", Depth: 1}},
		},
		{
			name: "a loop that leaves the function alone",
			src:  "f(){ ls; }; for i in 1 2; do f; done",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f", Function: true}},
		},
		{
			name: "a recursive call is not analysed again: it may run in another directory",
			src:  "f(){ rm -rf x; cd ..; f; }; f",
			cmds: []cmd{
				{Name: "rm", Stdin: "pipe", Paths: []string{"/ws/x"}}, {Name: "cd", Stdin: "pipe"}, {Name: "f", Stdin: "pipe"},
				{Name: "rm", Paths: []string{"/ws/x"}}, {Name: "cd"}, {Name: "f"}, {Name: "f", Function: true},
			},
		},
		{
			name: "with lastpipe the last element of a pipeline runs in this shell",
			src:  "f(){ ls; }; echo | unset -f f; f",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "echo"}, {Name: "unset", Stdin: "pipe"}, {Name: "ls"}, {Name: "f"}},
		},
		{
			name: "and may define a function",
			src:  "echo | f(){ ls; }; f",
			cmds: []cmd{{Name: "echo"}, {Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f"}},
		},
		{
			name: "or change the directory",
			src:  "echo | cd /tmp; ls x",
			cmds: []cmd{{Name: "echo"}, {Name: "cd", Stdin: "pipe"}, {Name: "ls", Paths: []string{"/tmp/x"}}, {Name: "ls", Paths: []string{"/ws/x"}}},
		},
		{
			name: "a mapfile -C callback runs in this shell",
			src:  "f(){ ls; }; mapfile -C 'unset -f f' a; f",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "mapfile"}, {Name: "unset", Depth: 1}, {Name: "ls"}, {Name: "f"}},
		},
		{
			name: "a trap handler calls the functions defined before it, none surely",
			src:  "f(){ ls; }; g(){ f; }; trap g EXIT; unset -f f",
			cmds: []cmd{
				{Name: "ls", Stdin: "pipe"}, {Name: "ls", Stdin: "pipe"}, {Name: "f", Stdin: "pipe", Function: true}, {Name: "trap"},
				{Name: "ls", Depth: 1}, {Name: "f", Depth: 1}, {Name: "g", Depth: 1}, {Name: "unset"},
			},
		},
		{
			name: "bash calls command_not_found_handle at any time",
			src:  "f(){ ls; }; command_not_found_handle(){ f; }",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "ls", Stdin: "pipe"}, {Name: "f", Stdin: "pipe"}},
		},
		{
			name: "a sourced script may remove the function",
			src:  "f(){ ls; }; . ./lib.sh; f",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: ".", Paths: []string{"/ws/lib.sh"}}, {Name: "ls"}, {Name: "f"}},
		},
		{
			name: "a readonly function is not replaced: both bodies may run",
			src:  "f(){ ls; }; readonly -f f; f(){ id; }; f",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "readonly"}, {Name: "id", Stdin: "pipe"}, {Name: "id"}, {Name: "ls"}, {Name: "f", Function: true}},
		},
		{
			name: "bash refuses a name with a backslash",
			src:  `f\x(){ ls; }; 'f\x'`,
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: `f\x`}},
		},
		{
			name: "zsh, ksh and shells not known may shadow a function",
			src:  "zsh -c 'f(){ ls; }; f'; ssh h 'f(){ ls; }; f'; sh -c 'f(){ ls; }; f'",
			cmds: []cmd{
				{Name: "zsh"}, {Name: "ls", Depth: 1, Stdin: "pipe"}, {Name: "ls", Depth: 1}, {Name: "f", Depth: 1},
				{Name: "ssh"}, {Name: "ls", Depth: 1, Stdin: "pipe"}, {Name: "ls", Depth: 1}, {Name: "f", Depth: 1},
				{Name: "sh"}, {Name: "ls", Depth: 1, Stdin: "pipe"}, {Name: "ls", Depth: 1}, {Name: "f", Depth: 1, Function: true},
			},
		},
		{
			name: "a redirection that fails skips the group that defines",
			src:  "{ f(){ ls; }; } < missing; f",
			cmds: []cmd{{Name: "ls", Stdin: "pipe", Paths: []string{"/ws/missing"}}, {Name: "ls"}, {Name: "f"}},
		},
		{
			name: "an expansion error abandons the rest of the line",
			src:  "echo $((1/0)); f(){ ls; }\nf; UID=0; g(){ ls; }\ng",
			cmds: []cmd{
				{Name: "echo"}, {Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f"},
				{Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "g"},
			},
		},
		{
			name: "even from a function called on the line, or continued onto it",
			src:  "e(){ echo $((1/0)); }; e; f(){ ls; }\nf; echo $x; \\\ng(){ ls; }\ng",
			cmds: []cmd{
				{Name: "echo", Stdin: "pipe"}, {Name: "echo"}, {Name: "e", Function: true}, {Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f"},
				{Name: "echo"}, {Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "g"},
			},
		},
		{
			name: "so does one in a case word",
			src:  "case $((1/0)) in *) ;; esac; f(){ ls; }\nf",
			cmds: []cmd{{Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f"}},
		},
		{
			name: "a literal command cannot abandon its line, and a new line starts afresh",
			src:  "echo start; f(){ ls; }; f\necho $((1+1))\ng(){ ls; }; g",
			cmds: []cmd{
				{Name: "echo"}, {Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "f", Function: true},
				{Name: "echo"}, {Name: "ls", Stdin: "pipe"}, {Name: "ls"}, {Name: "g", Function: true},
			},
		},
		{
			name: "a child shell sees only exported functions",
			src:  "rm(){ :; }; bash -c 'rm -rf /'; export -f rm; bash -c 'rm x'",
			cmds: []cmd{
				{Name: ":", Stdin: "pipe"}, {Name: "bash"}, {Name: "rm", Depth: 1, Paths: []string{"/"}},
				{Name: "export"}, {Name: "bash"}, {Name: ":", Depth: 1}, {Name: "rm", Depth: 1, Paths: []string{"/ws/x"}},
			},
		},
		{
			name: "a special builtin is listed too",
			src:  "eval(){ :; }; eval 'rm -rf /'",
			cmds: []cmd{{Name: ":", Stdin: "pipe"}, {Name: ":"}, {Name: "eval"}, {Name: "rm", Depth: 1, Paths: []string{"/"}}},
		},
	})
}

// TestUnknownStdin: a shell reading a standard input the analysis does
// not follow counts as fed by any download in the string.
func TestUnknownStdin(t *testing.T) {
	dl := []string{"stdin_shell:pipe", "download_to_shell:curl"}
	runCases(t, []tcase{
		{
			name:    "tee into a process substitution",
			src:     "curl x | tee >(sh)",
			cmds:    []cmd{{Name: "curl"}, {Name: "sh", Depth: 1, Stdin: "pipe", Marks: dl}, {Name: "tee", Stdin: "pipe", Dynamic: true}},
			dynamic: true,
		},
		{
			name: "redirection into a process substitution",
			src:  "curl x > >(bash)",
			cmds: []cmd{{Name: "bash", Depth: 1, Stdin: "pipe", Marks: dl}, {Name: "curl"}},
		},
		{
			name: "a command substitution reads the pipe",
			src:  "curl x | echo \"$(sh)\"",
			cmds: []cmd{{Name: "curl"}, {Name: "sh", Depth: 1, Stdin: "pipe", Marks: []string{"download_to_shell:curl"}}, {Name: "echo", Stdin: "pipe"}},
		},
		{
			name: "and its text",
			src:  "echo 'rm -rf /' | echo \"$(sh)\"",
			cmds: []cmd{{Name: "echo"}, {Name: "sh", Depth: 1, Stdin: "pipe"}, {Name: "rm", Depth: 2, Paths: []string{"/"}}, {Name: "echo", Stdin: "pipe"}},
		},
		{
			name: "exec redirects the rest of the shell",
			src:  "exec < <(curl x); sh",
			cmds: []cmd{{Name: "curl", Depth: 1}, {Name: "exec", Stdin: "pipe"}, {Name: "sh", Stdin: "pipe", Marks: dl}},
		},
		{
			name: "a descriptor opened by exec",
			src:  "exec 3< <(curl x); sh <&3",
			cmds: []cmd{{Name: "curl", Depth: 1}, {Name: "exec"}, {Name: "sh", Stdin: "pipe", Marks: dl}},
		},
		{
			name: "exec < file",
			src:  "exec < f; sh",
			cmds: []cmd{{Name: "exec", Stdin: "file"}, {Name: "sh", Stdin: "file", Marks: []string{"runs_script:/ws/f"}}},
		},
		{
			name: "a function called from a download",
			src:  "f(){ sh; }; curl x | f",
			cmds: []cmd{{Name: "sh", Stdin: "pipe", Marks: dl}, {Name: "curl"}, {Name: "sh", Stdin: "pipe", Marks: dl}, {Name: "f", Stdin: "pipe", Function: true}},
		},
		{
			name: "without a download it still reads its program from stdin",
			src:  "f(){ sh; }; sh <&3",
			cmds: []cmd{
				{Name: "sh", Stdin: "pipe", Marks: []string{"stdin_shell:pipe"}, NoMarks: []string{"download_to_shell"}},
				{Name: "sh", Stdin: "pipe", Marks: []string{"stdin_shell:pipe"}, NoMarks: []string{"download_to_shell"}},
			},
		},
		{
			name: "an interpreter running a script is not fed",
			src:  "f(){ python3 x.py; }; curl -o y x",
			cmds: []cmd{{Name: "python3", Stdin: "pipe", NoMarks: []string{"download_to_shell", "stdin_shell"}}, {Name: "curl"}},
		},
	})
}
