package shell

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func FuzzAnalyze(f *testing.F) {
	for _, bp := range bypasses {
		f.Add(bp.src)
	}
	for _, s := range []string{
		"", "ls", "a | b && c || d; e &", "f() { g; }; f", "case x in y) z;; esac",
		"for i in 1 2; do echo $i; done", "while :; do x & done", "cat <<EOF\n$(id)\nEOF",
		"x=$((1+2)) y=${z:-w} cmd", "echo {a,b}{c,d} ~/x ~u/y", "arr=(a b); echo ${arr[@]}",
		"git -c core.pager='sh -c \"rm -rf /\"' log", "tar xzf a -C /", "find . -exec sh -c 'x {}' \\;",
		"sudo -u a env -S 'bash -c x' y", "ssh -o ProxyCommand='nc %h %p' h cmd", "sed -e 's/a/b/w /x' -e 'e ls'",
		"awk '{print | \"sh\"}'", "[ -f a ] && [[ -d b ]] || test -e c", "exec 3<>/dev/tcp/h/1; cat <&3",
		"cd sub && rm -rf ../x", "cat a//b/./../c", "cd nope; find .. -delete", "x=1; echo $((x+1)) ${a[x]}",
		"a(){ b|b& }; b(){ a; }; a", "exec < <(curl x); sh",
		strings.Repeat("(", 100), strings.Repeat("$(", 20) + strings.Repeat(")", 20),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		a := Analyze(src, testOpts)
		if a == nil {
			t.Fatal("nil analysis")
		}
		if strings.HasPrefix(a.Error, "internal error") {
			t.Fatalf("%q: %s", src, a.Error)
		}
		b, err := json.Marshal(a)
		if err != nil || !json.Valid(b) {
			t.Fatalf("%q: invalid JSON: %v", src, err)
		}
		if len(src) > DefaultMaxBytes && a.Error != ErrTooLong {
			t.Fatalf("%d bytes: Error = %q", len(src), a.Error)
		}
		if again, _ := json.Marshal(Analyze(src, testOpts)); string(again) != string(b) {
			t.Fatalf("%q: not deterministic", src)
		}
		if len(a.Commands) > DefaultMaxCommands {
			t.Fatalf("%q: %d commands", src, len(a.Commands))
		}
		if a.Error != "" && len(a.Commands) > 0 {
			t.Fatalf("%q: commands despite error %q", src, a.Error)
		}
		if len(a.DynamicReasons) > 0 != a.Dynamic {
			t.Fatalf("%q: Dynamic %v with reasons %q", src, a.Dynamic, a.DynamicReasons)
		}
		for _, c := range a.Commands {
			if c.Depth > DefaultMaxDepth {
				t.Fatalf("%q: depth %d", src, c.Depth)
			}
			if c.Dynamic && !a.Dynamic {
				t.Fatalf("%q: dynamic command in a static analysis", src)
			}
			for _, p := range c.Paths {
				// Every path is absolute and has no NUL. One without a
				// ".." element is lexically clean; one with it is kept
				// as written (resolve), since "link/.." names the parent
				// of the link's target and only the gate, walking it as
				// the kernel does, can tell which directory that is.
				if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 || !hasDotDot(p) && filepath.Clean(p) != p {
					t.Fatalf("%q: path %q not absolute, or clean without ..", src, p)
				}
			}
			for _, w := range c.Writes {
				if !slices.Contains(c.Paths, w) {
					t.Fatalf("%q: write %q not in paths", src, w)
				}
			}
		}
	})
}

func TestAnalyzeLimitsFromFuzzing(t *testing.T) {
	// Inputs that once were slow or deep stay bounded.
	for _, src := range []string{
		strings.Repeat("(", 5000),
		strings.Repeat("{a,b}", 30),
		strings.Repeat("eval ", 1000) + "x",
		strings.Repeat("$(", 3000) + strings.Repeat(")", 3000),
		strings.Repeat("a|", 10000) + "a",
	} {
		a := Analyze(src, testOpts)
		if a.Error == "" {
			t.Errorf("%.30q…: want an error, got %d commands", src, len(a.Commands))
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	src := `cd src && grep -rn "TODO" . | sort -u | head -n 20 > /tmp/todo.txt`
	if len(src) < 55 || len(src) > 70 {
		b.Fatalf("benchmark input is %d bytes", len(src))
	}
	b.ReportAllocs()
	for b.Loop() {
		Analyze(src, testOpts)
	}
}

// BenchmarkParseOnly is the parser alone on the same input, for scale.
func BenchmarkParseOnly(b *testing.B) {
	src := `cd src && grep -rn "TODO" . | sort -u | head -n 20 > /tmp/todo.txt`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), ""); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnalyzeNested(b *testing.B) {
	src := `sudo -u root env -i PATH=/bin bash -lc 'cd / && find . -name "*.log" -exec rm -f {} \;'`
	b.ReportAllocs()
	for b.Loop() {
		Analyze(src, testOpts)
	}
}
