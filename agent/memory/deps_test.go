package memory

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// execImporters are the packages outside the standard library allowed to
// import os/exec in this package's dependencies. modernc.org/libc emulates
// C's system() and popen() with it; SQLite never calls them, and
// TestNoProcessExecutionLinked shows none of it reaches a binary.
var execImporters = map[string]bool{"modernc.org/libc": true}

// TestDeps: the only route to os/exec in memory's dependencies, third-party
// ones included, is the known one, and none of them imports testing
// (internal/deptest holds memory's own import rules).
func TestDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", "-json=ImportPath,Imports,Standard", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
			Standard   bool
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if !p.Standard && !execImporters[p.ImportPath] && slices.Contains(p.Imports, "os/exec") {
			t.Errorf("%s imports os/exec: a new route to running processes", p.ImportPath)
		}
		if slices.Contains(p.Imports, "testing") {
			t.Errorf("%s imports testing in non-test code", p.ImportPath)
		}
	}
}

// TestNoProcessExecutionLinked builds a program that uses the store and
// checks that no os/exec code is linked into it.
func TestNoProcessExecutionLinked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// The program lives only in an overlay, in a directory of this package
	// that does not exist on disk.
	dir := t.TempDir()
	main := filepath.Join(wd, "linkcheck", "main.go")
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(linkcheckMain), 0o600); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{main: src}})
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "linkcheck")
	if out, err := exec.Command(gobin, "build", "-overlay", ov, "-o", bin, "./linkcheck").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	syms, err := exec.Command(gobin, "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	if !bytes.Contains(syms, []byte("agent/memory.(*Store).Search")) {
		t.Fatal("the store is not in the program; the check proves nothing")
	}
	for _, line := range strings.Split(string(syms), "\n") {
		if strings.Contains(line, " os/exec.") || strings.Contains(line, "libc.Xsystem") || strings.Contains(line, "libc.Xpopen") {
			t.Errorf("linked: %s", strings.TrimSpace(line))
		}
	}
}

const linkcheckMain = `package main

import (
	"context"
	"os"

	"github.com/clawsec/claw/agent/memory"
)

func main() {
	s, err := memory.Open(os.Args[1], memory.WithRedactor(func(s string) string { return s }))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx := context.Background()
	c, _ := s.NewConversation(ctx, "cli")
	s.Append(ctx, c.ID, memory.Message{Role: memory.RoleUser, Content: "hi"})
	s.Recent(ctx, c.ID, 5)
	s.Search(ctx, "hi", 5)
	s.Get(ctx, c.ID)
	s.Conversations(ctx, 0)
	s.Latest(ctx, "cli")
	s.SetSummary(ctx, c.ID, "", 0)
	s.Clear(ctx)
}
`
