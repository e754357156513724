package main

import (
	"strings"
	"testing"
)

func TestWriteDiff(t *testing.T) {
	var b strings.Builder
	writeDiff(&b, []string{"a", "b", "c"}, []string{"a", "x", "c", "d"})
	want := "  a\n- b\n+ x\n  c\n+ d\n"
	if b.String() != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", b.String(), want)
	}
}
