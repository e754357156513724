package executor

import (
	"crypto/sha256"
	"hash"
	"sync"
)

// capture keeps the head and the tail of a stream up to max bytes in all,
// hashes all of it, and never blocks the writer: a flood of output is
// drained and dropped, not buffered.
type capture struct {
	mu    sync.Mutex
	max   int
	head  []byte
	tail  []byte // ring buffer of the last max/2 bytes once head is full
	pos   int    // next write position in tail when it is full
	total int64
	h     hash.Hash
}

func newCapture(max int64) *capture {
	return &capture{max: int(max), h: sha256.New()}
}

// setMax changes the limit before anything was written.
func (c *capture) setMax(max int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max = int(max)
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.h.Write(p)
	c.total += int64(len(p))
	headMax := c.max - c.max/2
	tailMax := c.max / 2
	q := p
	if n := headMax - len(c.head); n > 0 {
		n = min(n, len(q))
		c.head = append(c.head, q[:n]...)
		q = q[n:]
	}
	if tailMax == 0 || len(q) == 0 {
		return len(p), nil
	}
	if len(q) >= tailMax {
		c.tail = append(c.tail[:0], q[len(q)-tailMax:]...)
		c.pos = 0
		return len(p), nil
	}
	for len(q) > 0 {
		if len(c.tail) < tailMax {
			n := min(tailMax-len(c.tail), len(q))
			c.tail = append(c.tail, q[:n]...)
			q = q[n:]
			continue
		}
		n := copy(c.tail[c.pos:], q)
		c.pos = (c.pos + n) % tailMax
		q = q[n:]
	}
	return len(p), nil
}

// truncationMark separates head and tail when the middle was dropped.
const truncationMark = "\n[... output truncated by claw ...]\n"

// bytes returns what was kept, and whether anything was dropped.
func (c *capture) bytes() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := append(append([]byte{}, c.tail[c.pos:]...), c.tail[:c.pos]...)
	kept := int64(len(c.head) + len(tail))
	out := append([]byte{}, c.head...)
	if c.total > kept {
		out = append(out, truncationMark...)
		return append(out, tail...), true
	}
	return append(out, tail...), false
}

func (c *capture) sum() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h.Sum(nil)
}
