package gate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Case is one policy expectation: an action, where it runs, and what the
// gate must decide. Cases are written as JSON lines or as a YAML list.
type Case struct {
	Name      string         `json:"name" yaml:"name"`
	Action    Action         `json:"action" yaml:"action"`
	Autonomy  string         `json:"autonomy" yaml:"autonomy"`
	Workspace string         `json:"workspace,omitempty" yaml:"workspace"`
	Cwd       string         `json:"cwd,omitempty" yaml:"cwd"`
	Config    map[string]any `json:"config,omitempty" yaml:"config"`
	// Expect is allow, ask, passphrase, deny, !deny (anything but deny)
	// or !allow (anything but a plain allow).
	Expect string `json:"expect" yaml:"expect"`
	// Rules, when given, must all be among the decision's reason ids.
	Rules []string `json:"rules,omitempty" yaml:"rules"`
	// Where is "file:line" of the case, for messages.
	Where string `json:"-" yaml:"-"`
}

// CaseResult is the outcome of one case.
type CaseResult struct {
	Case     Case
	Decision Decision
	Err      error
	Failure  string // empty when the case passed
}

// Limits on case files.
const (
	maxCaseFileBytes = 16 << 20
	maxCaseLineBytes = 1 << 20
)

var validExpect = map[string]bool{Allow: true, Ask: true, Passphrase: true, Deny: true, "!deny": true, "!allow": true}

// ParseCases reads cases from r. name decides the format: *.yaml and *.yml
// are a YAML list, anything else is JSON lines (blank lines and lines
// starting with # are skipped). Every malformed case is reported, with its
// line, in one error.
func ParseCases(r io.Reader, name string) ([]Case, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxCaseFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCaseFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxCaseFileBytes)
	}
	var cases []Case
	var errs []error
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		var nodes []yaml.Node
		if err := yaml.Unmarshal(data, &nodes); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, n := range nodes {
			var c Case
			where := fmt.Sprintf("%s:%d", name, n.Line)
			if err := n.Decode(&c); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
				continue
			}
			c.Where = where
			c.Action.Args = normalizeYAML(c.Action.Args)
			c.Config = normalizeYAML(c.Config)
			cases = append(cases, c)
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), maxCaseLineBytes)
		line := 0
		for sc.Scan() {
			line++
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			var c Case
			dec := json.NewDecoder(strings.NewReader(text))
			dec.DisallowUnknownFields()
			where := fmt.Sprintf("%s:%d", name, line)
			if err := dec.Decode(&c); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
				continue
			}
			c.Where = where
			cases = append(cases, c)
		}
		if err := sc.Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, line+1, err))
		}
	}
	for _, c := range cases {
		switch {
		case !validExpect[c.Expect]:
			errs = append(errs, fmt.Errorf("%s: expect %q is not one of allow, ask, passphrase, deny, !deny, !allow", c.Where, c.Expect))
		case c.Autonomy != "" && c.Autonomy != "readonly" && c.Autonomy != "supervised" && c.Autonomy != "full":
			errs = append(errs, fmt.Errorf("%s: autonomy %q is not one of readonly, supervised, full", c.Where, c.Autonomy))
		}
	}
	return cases, errors.Join(errs...)
}

// normalizeYAML turns YAML's map[string]interface{} trees into the JSON
// shapes the gate expects (ints become float64 as encoding/json would).
func normalizeYAML(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}

// Check runs one case with eng (whose policy the caller built from the
// case's config) in context c.
func Check(ctx context.Context, eng *Engine, cs Case, c Context) CaseResult {
	if cs.Autonomy != "" {
		c.Autonomy = cs.Autonomy
	}
	d, err := eng.Decide(ctx, cs.Action, c)
	res := CaseResult{Case: cs, Decision: d, Err: err}
	ok := false
	switch cs.Expect {
	case "!deny":
		ok = d.Decision != Deny
	case "!allow":
		ok = d.Decision != Allow
	default:
		ok = d.Decision == cs.Expect
	}
	ids := d.RuleIDs()
	var missing []string
	for _, r := range cs.Rules {
		if !slices.Contains(ids, r) {
			missing = append(missing, r)
		}
	}
	switch {
	case err != nil:
		res.Failure = fmt.Sprintf("gate error: %v", err)
	case !ok:
		res.Failure = fmt.Sprintf("got %s %v, want %s", d.Decision, ids, cs.Expect)
	case len(missing) > 0:
		res.Failure = fmt.Sprintf("got %s %v, missing rules %v", d.Decision, ids, missing)
	}
	return res
}
