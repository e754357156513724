//go:build linux

package executor

import (
	"strings"
	"testing"
)

// A helper that cannot read its config names itself and says to install
// claw and the helper together; other stages, and claw running itself as
// the child, keep the child's message as it is.
func TestSetupErrorNamesASkewedHelper(t *testing.T) {
	helper := launcher{path: "/usr/local/bin/claw-sandbox", argv0: HelperName}
	msg := `malformed sandbox config: json: unknown field "cgroups"`
	got := setupError("config", msg, helper).Error()
	for _, want := range []string{"sandbox setup failed at config: " + msg, "/usr/local/bin/claw-sandbox", "install claw and claw-sandbox together"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	for _, e := range []*SetupError{setupError("landlock", "x", helper), setupError("config", "x", launcher{path: "/usr/bin/claw", self: true})} {
		if strings.Contains(e.Error(), "together") {
			t.Errorf("%q blames the helper", e.Error())
		}
	}
}
