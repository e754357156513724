package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LookPath resolves cmd as the sandbox will, in the directories of path
// (a PATH value), to its canonical file: what a Spec must grant for the
// command itself to be read.
func LookPath(cmd, path string) (string, error) {
	if !strings.Contains(cmd, "/") {
		for _, d := range filepath.SplitList(path) {
			if fi, err := os.Stat(filepath.Join(d, cmd)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				cmd = filepath.Join(d, cmd)
				break
			}
		}
	}
	if !filepath.IsAbs(cmd) {
		return "", fmt.Errorf("%s: not found", cmd)
	}
	return filepath.EvalSymlinks(cmd)
}
