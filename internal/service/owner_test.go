package service

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocate: relative paths become absolute, an empty binary is this
// executable, and an unknown user is a *UserError naming it.
func TestLocate(t *testing.T) {
	o := Options{Home: "rel/home", Workspace: "rel/ws"}
	if err := o.Locate(); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]string{"binary": o.Binary, "home": o.Home, "workspace": o.Workspace} {
		if !filepath.IsAbs(p) {
			t.Errorf("%s %q is not absolute", name, p)
		}
	}
	if !strings.HasSuffix(o.Home, filepath.Join("rel", "home")) {
		t.Errorf("home %q", o.Home)
	}
	o = Options{Binary: "/usr/local/bin/claw", User: "claw-no-such-user-xyz"}
	err := o.Locate()
	var ue *UserError
	if !errors.As(err, &ue) || ue.Name != o.User || !strings.HasPrefix(err.Error(), `user "claw-no-such-user-xyz": `) {
		t.Errorf("unknown user: %v (%T)", err, err)
	}
}
