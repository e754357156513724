// Package sop runs standard operating procedures: deterministic
// workflows of tool, agent and approval steps, read from
// WORKSPACE/sops/NAME/SOP.toml.
//
//	name = "daily-check"
//	description = "Run a daily workspace check"
//
//	[[steps]]
//	id = "list"
//	kind = "tool"
//	tool = "file_list"
//	args = { path = "." }
//
//	[[steps]]
//	id = "summarize"
//	kind = "agent"
//	prompt = "Summarize the file list from the previous step."
//
//	[[steps]]
//	id = "approval"
//	kind = "approval"
//	prompt = "Continue to write report?"
//
//	[[steps]]
//	id = "write"
//	kind = "tool"
//	tool = "file_write"
//	args = { path = "daily-check.txt", content_from = "summarize" }
//	on_failure = "abort"
//
// A tool step's argument content_from names an earlier step whose output
// becomes the argument content. An agent step's message is its prompt
// followed by the previous step's output. A failed step aborts the run
// (on_failure = "abort", the default) or is recorded and passed over
// (on_failure = "continue").
//
// The package decides nothing and records nothing itself: every tool step
// and every approval is a broker call made by the [Runner]'s [Steps], and
// the run's state is saved in a [Store] after every step, so a run whose
// process died resumes at the step it was on.
package sop

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/clawsec/claw/internal/config"
)

// Step kinds.
const (
	KindTool     = "tool"
	KindAgent    = "agent"
	KindApproval = "approval"
)

// on_failure values.
const (
	Abort    = "abort"
	Continue = "continue"
)

// Bounds of an SOP file.
const (
	MaxFileBytes = 256 << 10
	MaxSteps     = 100
	MaxPrompt    = 16 << 10
)

// ContentFrom is the tool argument that takes an earlier step's output as
// the argument "content".
const ContentFrom = "content_from"

// SOP is one decoded, valid procedure.
type SOP struct {
	Name        string
	Description string
	Steps       []Step
}

// Step is one step of an SOP.
type Step struct {
	ID        string
	Kind      string // tool, agent, approval
	Tool      string // tool steps
	Args      map[string]any
	Prompt    string // agent and approval steps
	OnFailure string // abort (default) or continue
}

// From is the step whose output a tool step's content comes from, or "".
func (s Step) From() string {
	f, _ := s.Args[ContentFrom].(string)
	return f
}

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })

// ValidName reports whether s can name an SOP or a step: lower-case
// letters, digits, '-' and '_', at most 64 bytes, starting with a letter
// or digit (so it is also a safe directory name).
func ValidName(s string) bool { return idPattern().MatchString(s) }

// Decode parses and validates an SOP file called name. known reports
// whether a tool can be a tool step's tool. Every problem is reported at
// once, each with its line and column, as a *config.Errors.
func Decode(data []byte, name string, known func(tool string) bool) (*SOP, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, MaxFileBytes)
	}
	doc, err := config.ParseDocument(data, name)
	if err != nil {
		return nil, err
	}
	d := decoder{doc: doc, known: known}
	s := d.sop(doc.Tree())
	if err := doc.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

type decoder struct {
	doc   *config.Document
	known func(string) bool
}

func (d *decoder) sop(t map[string]any) *SOP {
	s := &SOP{}
	for k := range t {
		switch k {
		case "name", "description", "steps":
		default:
			d.doc.KeyProblem(k, "unknown key (want name, description, steps)")
		}
	}
	s.Name = d.str(t, "", "name", true)
	if s.Name != "" && !ValidName(s.Name) {
		d.doc.Problem("name", "%q is not a valid name (lower-case letters, digits, - and _)", s.Name)
	}
	s.Description = d.str(t, "", "description", false)
	raw, ok := t["steps"]
	if !ok {
		d.doc.Problem("steps", "no [[steps]]")
		return s
	}
	list, ok := raw.([]any)
	if !ok {
		d.doc.Problem("steps", "must be an array of tables ([[steps]])")
		return s
	}
	if len(list) == 0 {
		d.doc.Problem("steps", "no [[steps]]")
	}
	if len(list) > MaxSteps {
		d.doc.Problem("steps", "%d steps, at most %d", len(list), MaxSteps)
		list = list[:MaxSteps]
	}
	seen := map[string]int{}
	for i, x := range list {
		path := fmt.Sprintf("steps[%d]", i)
		st, ok := x.(map[string]any)
		if !ok {
			d.doc.Problem(path, "must be a table")
			continue
		}
		s.Steps = append(s.Steps, d.step(path, st, seen, i))
	}
	return s
}

func (d *decoder) step(path string, t map[string]any, seen map[string]int, i int) Step {
	st := Step{OnFailure: Abort}
	for k := range t {
		switch k {
		case "id", "kind", "tool", "args", "prompt", "on_failure":
		default:
			d.doc.KeyProblem(path+"."+k, "unknown key (want id, kind, tool, args, prompt, on_failure)")
		}
	}
	st.ID = d.str(t, path, "id", true)
	if st.ID != "" {
		if !ValidName(st.ID) {
			d.doc.Problem(path+".id", "%q is not a valid step id (lower-case letters, digits, - and _)", st.ID)
		} else if j, dup := seen[st.ID]; dup {
			d.doc.Problem(path+".id", "step id %q is used twice (first by steps[%d])", st.ID, j)
		} else {
			seen[st.ID] = i
		}
	}
	st.Kind = d.str(t, path, "kind", true)
	if f := d.str(t, path, "on_failure", false); f != "" {
		if f != Abort && f != Continue {
			d.doc.Problem(path+".on_failure", "%q is not abort or continue", f)
		}
		st.OnFailure = f
	}
	st.Prompt = d.str(t, path, "prompt", false)
	if len(st.Prompt) > MaxPrompt {
		d.doc.Problem(path+".prompt", "longer than %d bytes", MaxPrompt)
	}
	st.Tool = d.str(t, path, "tool", false)
	if a, ok := t["args"]; ok {
		if m, ok := a.(map[string]any); !ok {
			d.doc.Problem(path+".args", "must be a table")
		} else if _, err := json.Marshal(m); err != nil {
			d.doc.Problem(path+".args", "cannot be given to a tool (nan and inf are not JSON numbers)")
		} else {
			st.Args = m
		}
	}
	switch st.Kind {
	case KindTool:
		switch {
		case st.Tool == "":
			d.doc.Problem(path+".tool", "a tool step needs a tool")
		case d.known != nil && !d.known(st.Tool):
			d.doc.Problem(path+".tool", "unknown tool %q (see 'claw tool list')", st.Tool)
		}
		if _, ok := t["prompt"]; ok {
			d.doc.Problem(path+".prompt", "a tool step has no prompt")
		}
		if st.Args == nil {
			st.Args = map[string]any{}
		}
		d.contentFrom(path, st, seen, i)
	case KindAgent, KindApproval:
		if st.Prompt == "" {
			d.doc.Problem(path+".prompt", "this %s step needs a prompt", st.Kind)
		}
		for _, k := range []string{"tool", "args"} {
			if _, ok := t[k]; ok {
				d.doc.Problem(path+"."+k, "only a tool step has %s", k)
			}
		}
	case "":
	default:
		d.doc.Problem(path+".kind", "%q is not tool, agent or approval", st.Kind)
	}
	return st
}

// contentFrom checks that a tool step's content_from names an earlier step
// and does not clash with a content argument.
func (d *decoder) contentFrom(path string, st Step, seen map[string]int, i int) {
	raw, ok := st.Args[ContentFrom]
	if !ok {
		return
	}
	p := path + ".args." + ContentFrom
	from, isStr := raw.(string)
	j, found := seen[from]
	switch {
	case !isStr:
		d.doc.Problem(p, "must be a string: the id of an earlier step")
	case !found || j >= i:
		d.doc.Problem(p, "%q is not the id of an earlier step", from)
	}
	if _, ok := st.Args["content"]; ok {
		d.doc.Problem(path+".args.content", "give content or content_from, not both")
	}
}

// str returns the string at t[key]; a missing required key or a value of
// another type is a problem.
func (d *decoder) str(t map[string]any, path, key string, required bool) string {
	p := key
	if path != "" {
		p = path + "." + key
	}
	v, ok := t[key]
	if !ok {
		if required {
			d.doc.Problem(p, "missing")
		}
		return ""
	}
	s, ok := v.(string)
	switch {
	case !ok:
		d.doc.Problem(p, "must be a string")
	case s == "" && required:
		d.doc.Problem(p, "must not be empty")
	}
	return s
}

// ErrNotFound is returned for an SOP that does not exist.
var ErrNotFound = errors.New("no such SOP")
