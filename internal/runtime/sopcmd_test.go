package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCheckSOP: a valid SOP has no problems; an invalid one has a line
// per problem, its file, line and column first, escaped for the terminal;
// a missing one is a claw: line; a name that cannot be an SOP's is a
// usage error.
func TestCheckSOP(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "SOP.toml"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("good", "name = \"good\"\n[[steps]]\nid = \"a\"\nkind = \"tool\"\ntool = \"time\"\n")
	write("bad", "name = \"bad\"\n[[steps]]\nid = \"a\"\nkind = \"nope\"\n[[steps]]\nid = \"a\"\nkind = \"tool\"\ntool = \"time\"\n\"x\\u001b[2J\" = 1\n")

	if p, err := CheckSOP(dir, "good"); err != nil || p != nil {
		t.Errorf("good: %q, %v", p, err)
	}
	p, err := CheckSOP(dir, "bad")
	if err != nil || len(p) < 3 {
		t.Fatalf("bad: %q, %v; want a line per problem", p, err)
	}
	for _, l := range p {
		if !strings.HasPrefix(l, filepath.Join(dir, "bad", "SOP.toml")+":") || strings.ContainsRune(l, '\x1b') {
			t.Errorf("problem line %q", l)
		}
	}
	if p, err := CheckSOP(dir, "missing"); err != nil || len(p) != 1 || !strings.HasPrefix(p[0], "claw: ") {
		t.Errorf("missing: %q, %v", p, err)
	}
	var e *Error
	if _, err := CheckSOP(dir, "Not_A_Name"); !errors.As(err, &e) || e.Code != ExitUsage {
		t.Errorf("bad name: %v, want a usage error", err)
	}

	names, err := SOPsToCheck(dir, nil)
	if err != nil || !reflect.DeepEqual(names, []string{"bad", "good"}) {
		t.Errorf("SOPsToCheck = %q, %v", names, err)
	}
	if _, err := SOPsToCheck(t.TempDir(), nil); err == nil {
		t.Error("an empty sops directory has nothing to check and said nothing")
	}
}
