package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestUserPoliciesDigest: the digest a dry run is matched to a daemon by
// changes with every edit of a user policy the gate would compile (its
// name or bytes), and with nothing else; a set the gate could not read
// within its bounds is an error, so the dry run is decided in process.
func TestUserPoliciesDigest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "policies")
	digest := func() string {
		t.Helper()
		d, err := userPoliciesDigest(dir)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	none := digest() // no directory: no user policies
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if d := digest(); d != none {
		t.Errorf("an empty directory: %s, want %s as for none", d, none)
	}
	write("a.rego", "package claw.user\n")
	one := digest()
	if one == none {
		t.Error("adding a policy left the digest")
	}
	write("notes.txt", "not a policy")
	if err := os.Mkdir(filepath.Join(dir, "old.rego"), 0o700); err != nil {
		t.Fatal(err)
	}
	if d := digest(); d != one {
		t.Error("a file the gate does not compile changed the digest")
	}
	write("a.rego", "package claw.user\n\n")
	if d := digest(); d == one {
		t.Error("editing a policy left the digest")
	}
	write("a.rego", "package claw.user\n")
	if err := os.Rename(filepath.Join(dir, "a.rego"), filepath.Join(dir, "b.rego")); err != nil {
		t.Fatal(err)
	}
	if d := digest(); d == one {
		t.Error("renaming a policy left the digest")
	}

	write("big.rego", string(make([]byte, 256<<10+1)))
	if _, err := userPoliciesDigest(dir); err == nil {
		t.Error("a policy larger than the gate reads: no error")
	}
	os.Remove(filepath.Join(dir, "big.rego"))
	for i := range 64 {
		write(fmt.Sprintf("p%02d.rego", i), "package claw.user\n")
	}
	if _, err := userPoliciesDigest(dir); err == nil {
		t.Error("more policies than the gate compiles: no error")
	}
}
