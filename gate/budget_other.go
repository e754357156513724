//go:build !linux

package gate

import "time"

// threadCPUClock is unavailable here: budgets are wall-clock bounds.
func threadCPUClock() (func() time.Duration, bool) { return nil, false }
