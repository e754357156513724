package sop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/config"
)

func known(tool string) bool {
	switch tool {
	case "file_list", "file_read", "file_write", "shell":
		return true
	}
	return false
}

func readDaily(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "daily-check.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeDailyCheck decodes the seed's daily-check SOP.
func TestDecodeDailyCheck(t *testing.T) {
	p, err := Decode(readDaily(t), "SOP.toml", known)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "daily-check" || len(p.Steps) != 4 {
		t.Fatalf("got %+v", p)
	}
	w := p.Steps[3]
	if w.Kind != KindTool || w.Tool != "file_write" || w.From() != "summarize" || w.OnFailure != Abort {
		t.Fatalf("write step: %+v", w)
	}
	if p.Steps[1].Kind != KindAgent || p.Steps[2].Prompt != "Continue to write report?" {
		t.Fatalf("steps: %+v", p.Steps)
	}
}

// TestDecodeErrors checks that every problem of a file is reported in one
// pass, each at its line and column.
func TestDecodeErrors(t *testing.T) {
	src := `name = "bad"
colour = "red"

[[steps]]
id = "a"
kind = "tool"
tool = "rm_everything"

[[steps]]
id = "a"
kind = "agent"

[[steps]]
id = "w"
kind = "tool"
tool = "file_write"
args = { path = "x", content_from = "later" }
on_failure = "retry"

[[steps]]
id = "later"
kind = "wait"
`
	_, err := Decode([]byte(src), "SOP.toml", known)
	var errs *config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want *config.Errors, got %T %v", err, err)
	}
	want := []string{
		`SOP.toml:2:1: colour: unknown key`,
		`SOP.toml:7:8: steps[0].tool: unknown tool "rm_everything"`,
		`SOP.toml:10:6: steps[1].id: step id "a" is used twice (first by steps[0])`,
		`SOP.toml:9:3: steps[1].prompt: this agent step needs a prompt`,
		`SOP.toml:17:37: steps[2].args.content_from: "later" is not the id of an earlier step`,
		`SOP.toml:18:14: steps[2].on_failure: "retry" is not abort or continue`,
		`SOP.toml:22:8: steps[3].kind: "wait" is not tool, agent or approval`,
	}
	got := err.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	if len(errs.List) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(errs.List), len(want), got)
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, src := range map[string]string{
		"syntax":             "name = \n",
		"no steps":           `name = "x"`,
		"empty steps":        "name = \"x\"\nsteps = []",
		"bad name":           "name = \"../x\"\n[[steps]]\nid = \"a\"\nkind = \"approval\"\nprompt = \"ok?\"",
		"self reference":     "name = \"x\"\n[[steps]]\nid = \"a\"\nkind = \"tool\"\ntool = \"file_write\"\nargs = {path = \"p\", content_from = \"a\"}",
		"both contents":      "name = \"x\"\n[[steps]]\nid = \"s\"\nkind = \"agent\"\nprompt = \"p\"\n[[steps]]\nid = \"a\"\nkind = \"tool\"\ntool = \"file_write\"\nargs = {path = \"p\", content = \"c\", content_from = \"s\"}",
		"tool args on agent": "name = \"x\"\n[[steps]]\nid = \"a\"\nkind = \"agent\"\nprompt = \"p\"\ntool = \"shell\"",
		"nan argument":       "name = \"x\"\n[[steps]]\nid = \"a\"\nkind = \"tool\"\ntool = \"shell\"\nargs = {command = \"ls\", n = nan}",
		"not utf-8":          "name = \"\xff\"",
	} {
		t.Run(name, func(t *testing.T) {
			if p, err := Decode([]byte(src), "f.toml", known); err == nil {
				t.Fatalf("accepted: %+v", p)
			}
		})
	}
}

// FuzzDecode checks Decode's contract on any input: an error is a
// non-empty list of problems, each with a position inside the file; a
// decoded SOP is valid (valid, unique step ids; known kinds and tools;
// content_from naming an earlier step) and decodes to the same steps
// again.
func FuzzDecode(f *testing.F) {
	f.Add(readDaily(f))
	for _, s := range []string{
		"", "[[steps]]", "name = \"x\"\n[[steps]]\nid = \"a\"\nkind = \"approval\"\nprompt = \"go?\"",
		"name = \"x\"\nsteps = [{id = \"a\", kind = \"tool\", tool = \"shell\", args = {command = \"ls\"}, on_failure = \"continue\"}]",
		"name = \"x\"\n[[steps]]\nid = \"a\"\nkind = \"tool\"\ntool = \"file_write\"\nargs = {path = \"p\", content_from = \"a\"}",
		"name = 1\n[steps]\nid = 2",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data, "f.toml", known)
		if err != nil {
			var errs *config.Errors
			if !errors.As(err, &errs) {
				if len(data) > MaxFileBytes {
					return
				}
				t.Fatalf("error is not *config.Errors: %T %v", err, err)
			}
			lines := strings.Count(string(data), "\n") + 1
			if len(errs.List) == 0 {
				t.Fatal("empty error list")
			}
			for _, e := range errs.List {
				if e.Line < 1 || e.Col < 1 || e.Line > lines || e.File != "f.toml" || e.Msg == "" {
					t.Fatalf("malformed problem (%d lines): %+v", lines, e)
				}
			}
			return
		}
		if !ValidName(p.Name) || len(p.Steps) == 0 || len(p.Steps) > MaxSteps {
			t.Fatalf("invalid SOP accepted: %+v", p)
		}
		index := map[string]int{}
		for i, s := range p.Steps {
			if !ValidName(s.ID) {
				t.Fatalf("step %d: bad id %q", i, s.ID)
			}
			if _, dup := index[s.ID]; dup {
				t.Fatalf("duplicate step id %q accepted", s.ID)
			}
			index[s.ID] = i
			if s.OnFailure != Abort && s.OnFailure != Continue {
				t.Fatalf("step %d: on_failure %q", i, s.OnFailure)
			}
			switch s.Kind {
			case KindTool:
				if !known(s.Tool) || s.Prompt != "" {
					t.Fatalf("step %d: tool step %+v", i, s)
				}
				if _, has := s.Args[ContentFrom]; has {
					if j, ok := index[s.From()]; !ok || j >= i {
						t.Fatalf("step %d: content_from %v is not an earlier step", i, s.Args[ContentFrom])
					}
				}
			case KindAgent, KindApproval:
				if s.Prompt == "" || s.Tool != "" || s.Args != nil {
					t.Fatalf("step %d: %s step %+v", i, s.Kind, s)
				}
			default:
				t.Fatalf("step %d: kind %q accepted", i, s.Kind)
			}
		}
		again, err := Decode(data, "f.toml", known)
		if err != nil || len(again.Steps) != len(p.Steps) {
			t.Fatalf("second decode differs: %v", err)
		}
	})
}
