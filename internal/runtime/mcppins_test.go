package runtime

import (
	"slices"
	"testing"
)

func TestLineDiff(t *testing.T) {
	got := lineDiff([]string{"a", "b", "c"}, []string{"a", "x", "c", "d"})
	want := []string{"  a", "- b", "+ x", "  c", "+ d"}
	if !slices.Equal(got, want) {
		t.Fatalf("diff %q, want %q", got, want)
	}
}
