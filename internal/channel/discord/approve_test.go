package discord

import (
	"strings"
	"testing"
	"time"
)

// TestNewCode: codes are 5 letters of the alphabet without l, and every
// letter of it turns up.
func TestNewCode(t *testing.T) {
	seen := map[rune]int{}
	for range 2000 {
		c, err := newCode()
		if err != nil {
			t.Fatal(err)
		}
		if !validCode(c) || strings.ContainsRune(c, 'l') {
			t.Fatalf("code %q", c)
		}
		for _, r := range c {
			seen[r]++
		}
	}
	if len(seen) != len(codeLetters) {
		t.Errorf("%d letters seen in 10,000, want all %d", len(seen), len(codeLetters))
	}
}

// TestCodebook: a code is live until retired, then spent for a day, and
// the sixth wrong code in a minute is over the limit.
func TestCodebook(t *testing.T) {
	cb := newCodebook()
	now := time.Unix(1_800_000_000, 0)
	code, err := cb.issue(prompt{queueID: "apr_1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if p, st := cb.lookup(code); st != codeLive || p.queueID != "apr_1" {
		t.Fatalf("lookup = %+v, %d", p, st)
	}
	cb.retire(code, now)
	if _, st := cb.lookup(code); st != codeSpent {
		t.Fatalf("a retired code is %d, want spent", st)
	}
	for i := 1; i <= maxWrong; i++ {
		if cb.wrongCode("u", now.Add(time.Duration(i)*time.Second)) {
			t.Fatalf("wrong code %d is over the limit", i)
		}
	}
	if !cb.wrongCode("u", now.Add(10*time.Second)) {
		t.Fatal("the sixth wrong code in a minute is not over the limit")
	}
	if cb.wrongCode("u", now.Add(2*time.Minute)) {
		t.Fatal("the limit does not end with the minute")
	}
}
