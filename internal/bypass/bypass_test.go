package bypass_test

import (
	"bytes"
	"io/fs"
	"testing"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/bypass"
)

// Lower bounds on the corpus: a suite that loads nothing, or a class file
// emptied by a bad edit, would still report "0 failed".
const (
	minCases      = 300
	minClassCases = 5
)

// TestCorpusSize checks that every class file parses, holds at least
// minClassCases cases, that names are unique across the corpus, and that
// the corpus holds at least minCases cases.
func TestCorpusSize(t *testing.T) {
	names, err := fs.Glob(bypass.FS, "*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no class files embedded")
	}
	total := 0
	seen := map[string]string{}
	for _, n := range names {
		b, err := bypass.FS.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := gate.ParseCases(bytes.NewReader(b), n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if len(cases) < minClassCases {
			t.Errorf("%s has %d cases, want at least %d", n, len(cases), minClassCases)
		}
		for _, c := range cases {
			if prev, dup := seen[c.Name]; dup {
				t.Errorf("%s: case name %q is also used at %s", c.Where, c.Name, prev)
			}
			seen[c.Name] = c.Where
		}
		total += len(cases)
	}
	if total < minCases {
		t.Errorf("the corpus has %d cases, want at least %d", total, minCases)
	}
	t.Logf("%d cases in %d class files", total, len(names))
}
