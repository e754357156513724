package runtime

import (
	"testing"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

func TestSetTOMLKey(t *testing.T) {
	tests := []struct {
		name, doc, table, key, value, want string
	}{
		{name: "replace top level", doc: "a = \"1\"\n[t]\na = \"2\"\n", key: "a", value: "x", want: "a = \"x\"\n[t]\na = \"2\"\n"},
		{name: "add top level before the first table", doc: "# c\n\n[t]\nk = 1\n", key: "a", value: "x", want: "# c\na = \"x\"\n\n[t]\nk = 1\n"},
		{name: "replace in table", doc: "a = \"1\"\n[t]\na = \"2\" # note\n[u]\na = \"3\"\n", table: "t", key: "a", value: "x", want: "a = \"1\"\n[t]\na = \"x\"\n[u]\na = \"3\"\n"},
		{name: "commented key is not a key", doc: "[t]\n# a = \"2\"\n", table: "t", key: "a", value: "x", want: "[t]\na = \"x\"\n# a = \"2\"\n"},
		{name: "new table", doc: "a = 1\n", table: "providers.n", key: "kind", value: "mock", want: "a = 1\n\n[providers.n]\nkind = \"mock\"\n"},
		{name: "empty document", doc: "", key: "a", value: "x", want: "a = \"x\"\n"},
		{name: "quotes are escaped", doc: "[t]\n", table: "t", key: "a", value: "x\"y\\z\x01", want: "[t]\na = \"x\\\"y\\\\z\\u0001\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SetTOMLKey(tt.doc, tt.table, tt.key, tt.value); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// FuzzSetTOMLKey: whatever the value, the edited document parses and holds
// exactly that value.
func FuzzSetTOMLKey(f *testing.F) {
	for _, s := range []string{"", "x", `a"b`, `c:\dir`, "tab\there", "\x00\x7f", "é ☃", "'''", `"""`} {
		f.Add(s, "[t]\nk = \"old\"\n# k = \"c\"\n")
	}
	f.Fuzz(func(t *testing.T, value, doc string) {
		var before map[string]any
		if toml.Unmarshal([]byte(doc), &before) != nil || !utf8.ValidString(value) {
			return
		}
		got := SetTOMLKey(doc, "t", "k", value)
		var after struct {
			T map[string]any `toml:"t"`
		}
		if err := toml.Unmarshal([]byte(got), &after); err != nil {
			// A document the line-based edit cannot handle (a header
			// inside a multi-line string, an inline table named t) must
			// fail here; onboard then refuses to write.
			return
		}
		if v, ok := after.T["k"].(string); ok && v != value {
			t.Fatalf("k = %q, want %q\n%s", v, value, got)
		}
	})
}
