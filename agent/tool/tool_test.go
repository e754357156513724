package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
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

// FuzzDecode: arguments come from a model. Decode accepts only what
// its documentation promises: at most MaxArgBytes of UTF-8 holding one
// JSON object (or a JSON string holding one, and nothing else), with every
// required property, no unknown one, each of its type and value; encoding
// what it returns and decoding that again gives it back. It refuses with
// an *ArgError naming the tool (ErrUnknownTool for an unknown tool) and a
// nil map, and it is deterministic.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `"{\"path\":\"a\"}"`, `null`, `[]`, `{"url":"u","headers":{"a":"b"}}`, `{"path":1e400}`, `{"a":`,
		` {"command":"<&>\u2028"} `, `{"url":"u","headers":{}}`, `{"command":"a","command":"b"}`,
		`{"url":""}}`, `{"command":"ls"}]`, `"{\"command\":\"ls\"} {\"command\":\"id\"}"`, `"{\"command\":\"ls\"}]"`} {
		f.Add("shell", s)
		f.Add("http", s)
	}
	f.Add("time", ``)
	f.Add("file_write", `{"path":"p","content":""}`)
	f.Add("rm", `{}`)
	f.Fuzz(func(t *testing.T, name, raw string) {
		args, err := Decode(name, json.RawMessage(raw))
		again, err2 := Decode(name, json.RawMessage(raw))
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(args, again) {
			t.Fatalf("Decode(%q, %q) is not deterministic: %v, %v", name, raw, err, err2)
		}
		spec, known := Lookup(name)
		if err != nil {
			var ae *ArgError
			switch {
			case args != nil:
				t.Fatalf("Decode(%q, %q) = %v with error %v", name, raw, args, err)
			case !known && !errors.Is(err, ErrUnknownTool):
				t.Fatalf("unknown tool %q: %v", name, err)
			case known && (!errors.As(err, &ae) || ae.Tool != name):
				t.Fatalf("Decode(%q, %q): %v is not an *ArgError for the tool", name, raw, err)
			}
			return
		}
		if !known {
			t.Fatalf("unknown tool %q decoded", name)
		}
		doc := strings.TrimSpace(raw)
		if doc == "" || doc == "null" {
			doc = "{}"
		}
		if len(raw) > MaxArgBytes || !utf8.ValidString(doc) || !json.Valid([]byte(doc)) {
			t.Fatalf("Decode(%q, %q) accepted what is not one JSON value of UTF-8 within the bound", name, raw)
		}
		var inner string
		if json.Unmarshal([]byte(doc), &inner) == nil {
			if !json.Valid([]byte(inner)) {
				t.Fatalf("Decode(%q, %q) accepted a string that is not one JSON value", name, raw)
			}
			doc = inner
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("Decode(%q, %q) accepted what is not an object: %v", name, raw, err)
		}
		if len(obj) != len(args) {
			t.Fatalf("Decode(%q, %q) = %v, the object has %d properties", name, raw, args, len(obj))
		}
		for _, p := range spec.Props {
			v, ok := args[p.Name]
			if !ok {
				if p.Required {
					t.Fatalf("Decode(%q, %q) = %v without %q", name, raw, args, p.Name)
				}
				continue
			}
			switch p.Type {
			case "string":
				if v != obj[p.Name] {
					t.Fatalf("%s = %#v, the object has %#v", p.Name, v, obj[p.Name])
				}
			case "integer":
				if _, ok := v.(int64); !ok {
					t.Fatalf("%s is %T", p.Name, v)
				}
			case "boolean":
				if v != obj[p.Name] {
					t.Fatalf("%s = %#v, the object has %#v", p.Name, v, obj[p.Name])
				}
			case "object":
				m, ok := v.(map[string]any)
				if !ok || !reflect.DeepEqual(map[string]any(m), obj[p.Name]) {
					t.Fatalf("%s = %#v, the object has %#v", p.Name, v, obj[p.Name])
				}
			}
		}
		for k := range args {
			if !slices.ContainsFunc(spec.Props, func(p Prop) bool { return p.Name == k }) {
				t.Fatalf("unknown property %q accepted", k)
			}
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(args); err != nil {
			t.Fatal(err)
		}
		back, err := Decode(name, b.Bytes())
		if err != nil || !reflect.DeepEqual(back, args) {
			t.Fatalf("Decode(%q, %s) = %v, %v; want it back as %v", name, b.Bytes(), back, err, args)
		}
	})
}
