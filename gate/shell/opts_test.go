package shell

import "testing"

func TestAbbrev(t *testing.T) {
	names := []string{"to-stdout", "to-command", "totals", "touch", "verbose", "version"}
	runs := func(n string) bool { return n == "to-command" }
	cases := []struct {
		name, want string
		ok         bool
	}{
		{name: "totals", want: "totals", ok: true},
		{name: "tou", want: "touch", ok: true},
		{name: "to-c", want: "to-command", ok: true},
		{name: "to", want: "to-command", ok: true}, // ambiguous, could run: runs
		{name: "t", want: "to-command", ok: true},
		{name: "", want: "to-command", ok: true},
		{name: "ver", ok: false}, // ambiguous, none runs
		{name: "x", ok: false},
		{name: "totalsx", ok: false},
	}
	for _, c := range cases {
		got, ok := abbrev(c.name, names, runs)
		if got != c.want || ok != c.ok {
			t.Errorf("abbrev(%q) = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestResolveLongAmbiguousRuns checks that a spec's options marked ! win
// an ambiguous abbreviation, with their arity, and that one among options
// that run nothing stays as written.
func TestResolveLongAmbiguousRuns(t *testing.T) {
	sp := spec("--to-stdout --to-command=! --totals --verbose --version")
	if name, kind := sp.resolveLong("to"); name != "to-command" || kind != argRequired {
		t.Errorf("resolveLong(to) = %q, %d; want to-command, argRequired", name, kind)
	}
	if name, kind := sp.resolveLong("ver"); name != "ver" || kind != argNone {
		t.Errorf("resolveLong(ver) = %q, %d; want ver as written", name, kind)
	}
}
