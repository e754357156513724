package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// MaxExposure is the highest "overall exposure level" of systemd-analyze
// security that claw's unit may have (0 is fully locked down, 10 is
// unconfined; systemd calls up to 2.0 "OK").
const MaxExposure = 2.0

// ErrNoAnalyzer is returned by [Analyze] when systemd-analyze is not
// installed.
var ErrNoAnalyzer = errors.New("systemd-analyze not found")

var exposureRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)Overall exposure level for \S+: ([0-9]+(?:\.[0-9]+)?)`)
})

// ParseExposure finds the overall exposure level in the output of
// systemd-analyze security.
func ParseExposure(out []byte) (float64, error) {
	m := exposureRe().FindSubmatch(out)
	if m == nil {
		return 0, errors.New("no overall exposure level in the systemd-analyze output")
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil || v < 0 || v > 10 {
		return 0, fmt.Errorf("bad exposure level %q", m[1])
	}
	return v, nil
}

// Analyze runs "systemd-analyze security --offline=yes" on the unit file
// at path (it works without systemd running) and returns the overall
// exposure level and the full report.
func Analyze(ctx context.Context, path string) (float64, []byte, error) {
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		return 0, nil, ErrNoAnalyzer
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "security", "--offline=yes", "--no-pager", path)
	cmd.Env = []string{"SYSTEMD_COLORS=0", "LANG=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	v, err := ParseExposure(out.Bytes())
	if err != nil {
		if runErr != nil {
			return 0, out.Bytes(), fmt.Errorf("systemd-analyze security: %w: %s", runErr, bytes.TrimSpace(lastLines(out.Bytes(), 5)))
		}
		return 0, out.Bytes(), err
	}
	return v, out.Bytes(), nil
}

func lastLines(b []byte, n int) []byte {
	b = bytes.TrimRight(b, "\n")
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			n--
			if n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}
