//go:build !linux

package gate

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
