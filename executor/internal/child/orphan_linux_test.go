package child

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOrphaned: a relayed child exits at once when its relay died before
// the child's parent-death signal was set: the life pipe has hung up. A
// live relay (write end open) is no orphan; a missing or wrong descriptor
// is treated as one.
func TestOrphaned(t *testing.T) {
	pipe := func(t *testing.T, closeWrite bool) int {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		if closeWrite {
			unix.Close(p[1])
		} else {
			t.Cleanup(func() { unix.Close(p[1]) })
		}
		return p[0]
	}
	f, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		name string
		fd   func(t *testing.T) int
		want bool
	}{
		{name: "relay alive", fd: func(t *testing.T) int { return pipe(t, false) }, want: false},
		{name: "relay dead", fd: func(t *testing.T) int { return pipe(t, true) }, want: true},
		{name: "no descriptor", fd: func(t *testing.T) int { return 1 << 20 }, want: true},
		{name: "not a pipe", fd: func(t *testing.T) int { fd, _ := unix.Dup(int(f.Fd())); return fd }, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := orphaned(tc.fd(t)); got != tc.want {
				t.Fatalf("orphaned = %v, want %v", got, tc.want)
			}
		})
	}
}
