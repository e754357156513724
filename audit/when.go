package audit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTime reads a time bound as the --since, --from and --until flags
// give it, counted back from now where it is relative: an RFC 3339 time,
// a date (YYYY-MM-DD, midnight UTC), a duration (90m, 24h) or a number of
// days (7d). Empty is the zero time, no bound.
func ParseTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 && strconv.Itoa(n) == d {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("bad time %q (want RFC 3339, YYYY-MM-DD, or a duration like 24h or 7d)", s)
}

// ParseFilter reads the bounds of a --since (or --from) and an --until
// flag, as [ParseTime] does.
func ParseFilter(since, until string, now time.Time) (Filter, error) {
	s, err := ParseTime(since, now)
	if err != nil {
		return Filter{}, err
	}
	u, err := ParseTime(until, now)
	if err != nil {
		return Filter{}, err
	}
	return Filter{Since: s, Until: u}, nil
}
