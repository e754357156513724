package audit

import (
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "", want: time.Time{}},
		{in: "2026-11-01T08:30:00Z", want: time.Date(2026, 11, 1, 8, 30, 0, 0, time.UTC)},
		{in: "2026-11-01T08:30:00.5+01:00", want: time.Date(2026, 11, 1, 7, 30, 0, 5e8, time.UTC)},
		{in: "2026-11-01", want: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		{in: "24h", want: now.Add(-24 * time.Hour)},
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "7d", want: now.Add(-7 * 24 * time.Hour)},
		{in: "0d", want: now},
		{in: "yesterday", bad: true},
		{in: "-1h", bad: true},
		{in: "-1d", bad: true},
		{in: "07d", bad: true},
		{in: "1.5d", bad: true},
		{in: "d", bad: true},
		{in: "2026-13-01", bad: true},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in, now)
		if c.bad {
			if err == nil || !strings.Contains(err.Error(), "bad time") {
				t.Errorf("ParseTime(%q) = %v, %v; want a bad time error", c.in, got, err)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseFilter(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	f, err := ParseFilter("24h", "2026-11-27", now)
	if err != nil || !f.Since.Equal(now.Add(-24*time.Hour)) || !f.Until.Equal(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseFilter = %+v, %v", f, err)
	}
	for _, c := range [][2]string{{"yesterday", ""}, {"", "tomorrow"}} {
		if _, err := ParseFilter(c[0], c[1], now); err == nil || !strings.Contains(err.Error(), "bad time") {
			t.Errorf("ParseFilter(%q, %q) = %v, want a bad time error", c[0], c[1], err)
		}
	}
}
