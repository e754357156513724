package tool

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		tool string
		raw  string
		want string // JSON of the decoded args, or "" for an error
		err  string // substring of the error
	}{
		{name: "object", tool: "file_read", raw: `{"path":"a.txt"}`, want: `{"path":"a.txt"}`},
		{name: "string holding an object", tool: "file_read", raw: `"{\"path\":\"a.txt\"}"`, want: `{"path":"a.txt"}`},
		{name: "no arguments for time", tool: "time", raw: ``, want: `{}`},
		{name: "null for time", tool: "time", raw: `null`, want: `{}`},
		{name: "headers object", tool: "http", raw: `{"url":"https://x","headers":{"A":"b"}}`, want: `{"headers":{"A":"b"},"url":"https://x"}`},
		{name: "missing required", tool: "file_write", raw: `{"path":"a"}`, err: `missing "content"`},
		{name: "unknown property", tool: "file_read", raw: `{"path":"a","mode":1}`, err: `unknown property "mode"`},
		{name: "wrong type", tool: "shell", raw: `{"command":["ls"]}`, err: `"command" must be a string, got an array`},
		{name: "header value not a string", tool: "http", raw: `{"url":"u","headers":{"A":1}}`, err: `"headers"."A" must be a string`},
		{name: "not JSON", tool: "shell", raw: `ls -la`, err: "not JSON"},
		{name: "array", tool: "shell", raw: `["ls"]`, err: "must be a JSON object, got an array"},
		{name: "two values", tool: "shell", raw: `{"command":"a"} {"command":"b"}`, err: "more than one JSON value"},
		{name: "string not an object", tool: "shell", raw: `"ls"`, err: "string that is not a JSON object"},
		{name: "unknown tool", tool: "rm", raw: `{}`, err: "unknown tool"},
		{name: "not UTF-8", tool: "shell", raw: "{\"command\":\"\xff\"}", err: "not UTF-8"},
		{name: "too large", tool: "shell", raw: `{"command":"` + strings.Repeat("a", MaxArgBytes) + `"}`, err: "more than the"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.tool, json.RawMessage(tc.raw))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				var ae *ArgError
				if tc.tool != "rm" && !errors.As(err, &ae) {
					t.Errorf("err is %T, want *ArgError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Errorf("got %s, want %s", b, tc.want)
			}
		})
	}
}

func TestSchemasAreValidJSONSchemaObjects(t *testing.T) {
	for _, s := range All() {
		var v struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties bool                       `json:"additionalProperties"`
		}
		if err := json.Unmarshal(s.Schema(), &v); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if v.Type != "object" || v.AdditionalProperties || len(v.Properties) != len(s.Props) {
			t.Errorf("%s: schema %s", s.Name, s.Schema())
		}
		for _, r := range v.Required {
			if _, ok := v.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", s.Name, r)
			}
		}
		if s.Risk == "" || s.Description == "" {
			t.Errorf("%s: no risk or description", s.Name)
		}
	}
}

func TestSelect(t *testing.T) {
	got, err := Select([]string{"shell", "time"})
	if err != nil || len(got) != 2 || got[0].Name != "time" || got[1].Name != "shell" {
		t.Fatalf("Select = %v, %v", got, err)
	}
	if _, err := Select([]string{"time", "rmrf"}); err == nil || !strings.Contains(err.Error(), "rmrf") {
		t.Fatalf("unknown tool not reported: %v", err)
	}
	if all, _ := Select(nil); len(all) != len(All()) {
		t.Fatal("nil does not select every tool")
	}
}

// FuzzDecode: arguments come from a model; Decode must never panic and
// must return either an error or an object holding only known properties
// of the right types.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `"{\"path\":\"a\"}"`, `null`, `[]`, `{"url":"u","headers":{"a":"b"}}`, `{"path":1e400}`, `{"a":`} {
		f.Add("shell", s)
		f.Add("http", s)
	}
	f.Fuzz(func(t *testing.T, name, raw string) {
		args, err := Decode(name, json.RawMessage(raw))
		if err != nil {
			return
		}
		spec, ok := Lookup(name)
		if !ok {
			t.Fatalf("unknown tool %q decoded", name)
		}
		for k, v := range args {
			found := false
			for _, p := range spec.Props {
				if p.Name == k {
					found = true
					if p.Type == "string" {
						if _, ok := v.(string); !ok {
							t.Fatalf("%s is %T", k, v)
						}
					}
				}
			}
			if !found {
				t.Fatalf("unknown property %q accepted", k)
			}
		}
	})
}
