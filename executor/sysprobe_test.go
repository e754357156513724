package executor

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// sysprobeBuild is testdata/sysprobe.c, built once into testBin (readable
// in every sandbox the tests make) with the C compiler cgo uses: static
// where the C library allows it.
var sysprobeBuild struct {
	once sync.Once
	path string
	err  []byte
}

// sysprobeArgv is the argv of one sysprobe call.
func sysprobeArgv(t *testing.T, args ...string) []string {
	t.Helper()
	b := &sysprobeBuild
	b.once.Do(func() {
		cc, _ := exec.Command("go", "env", "CC").Output()
		out := filepath.Join(testBin, "sysprobe")
		for _, static := range []string{"-static", ""} {
			argv := append(strings.Fields(string(cc)), "-O2", "-o", out, "testdata/sysprobe.c")
			if static != "" {
				argv = append(argv, static)
			}
			msg, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			if err == nil {
				b.path, b.err = out, nil
				return
			}
			b.err = append(b.err, msg...)
		}
	})
	if b.path == "" {
		t.Fatalf("building the sysprobe: %s", b.err)
	}
	return append([]string{b.path}, args...)
}
