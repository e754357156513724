package main

import (
	"strings"
	"testing"
)

// TestParseDocBlocks: the example runner finds the commands of sh and
// console blocks, their documented exit status and their markers, and
// refuses a malformed marker with the file and line.
func TestParseDocBlocks(t *testing.T) {
	doc := strings.Join([]string{
		"# title",                  // 1
		"```",                      // 2: untagged: a synopsis, not run
		"claw keys show [-o json]", // 3
		"```",                      // 4
		"<!-- example",             // 5
		"setup: claw init",         // 6
		"needs: sandbox",           // 7
		"-->",                      // 8
		"```sh",                    // 9
		"claw gate test shell 'rm -rf /'   # deny, exit 3", // 10
		"claw gate test \\",          // 11
		"  --autonomy full shell ls", // 12
		"cat > f <<'EOF'",            // 13
		"# not a comment",            // 14
		"EOF",                        // 15
		"```",                        // 16
		"```` ```json ```` inline",   // 17: not a fence
		"  ```console",               // 18
		"  $ claw version",           // 19
		"  claw dev (go)",            // 20: output
		"  $ claw gate test \\",      // 21
		"  > shell ls",               // 22: the shell's PS2
		"  ```",                      // 23
	}, "\n")
	blocks, err := parseDocBlocks("x.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 {
		t.Fatalf("%d blocks, want 2: %+v", len(blocks), blocks)
	}
	b := blocks[0]
	if b.line != 9 || len(b.setup) != 1 || b.setup[0] != "claw init" || len(b.needs) != 1 || b.needs[0] != "sandbox" {
		t.Errorf("block 1: %+v", b)
	}
	want := []docExample{
		{line: 10, text: "claw gate test shell 'rm -rf /'", want: 3, noted: true},
		{line: 11, text: "claw gate test \\\n  --autonomy full shell ls"},
		{line: 13, text: "cat > f <<'EOF'\n# not a comment\nEOF"},
	}
	if len(b.cmds) != len(want) {
		t.Fatalf("commands %+v, want %+v", b.cmds, want)
	}
	for i, w := range want {
		if b.cmds[i] != w {
			t.Errorf("command %d = %+v, want %+v", i, b.cmds[i], w)
		}
	}
	if !strings.Contains(b.src, "# not a comment\nEOF\n") {
		t.Errorf("the here-document is not in the script:\n%s", b.src)
	}
	c := blocks[1]
	if len(c.cmds) != 2 || c.cmds[0].text != "claw version" || c.cmds[0].line != 19 || c.cmds[1].text != "claw gate test \\\nshell ls" {
		t.Errorf("console block: %+v", c.cmds)
	}

	for _, tc := range []struct{ name, doc, want string }{
		{"unknown key", "<!-- example\nsetip: claw init\n-->\n```sh\nls\n```", "x.md:1: example comment has unknown key \"setip\""},
		{"unknown skip kind", "<!-- example: skip: lazy -->\n```sh\nls\n```", "skip: \"lazy\": the first word must be one of"},
		{"marker before prose", "<!-- example: setup: ls -->\ntext\n```sh\nls\n```", "x.md:1: an <!-- example --> comment must come right before"},
		{"marker before toml", "<!-- example: setup: ls -->\n```toml\na = 1\n```", "which is not run"},
		{"unclosed fence", "```sh\nls\n", "x.md:1: fenced block is not closed"},
		{"two statuses", "```sh\nls # exit 1 or exit 2\n```", "more than one exit status"},
		{"bad shell", "```sh\nls 'x\n```", "does not parse as shell"},
	} {
		_, err := parseDocBlocks("x.md", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
