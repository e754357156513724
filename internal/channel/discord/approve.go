package discord

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/textesc"
)

// codeLetters are the letters of an approval code: lowercase, without l
// (which reads as 1 or I). 25⁵ codes, about 23 bits: a code names a
// pending action, the approver's identity is what authorizes it.
const codeLetters = "abcdefghijkmnopqrstuvwxyz"

// codeLen is the length of an approval code.
const codeLen = 5

// Bounds of the code book.
const (
	codeReserve  = 24 * time.Hour // a code is not issued again for this long
	maxWrong     = 5              // wrong codes a user may send per wrongWindow
	wrongWindow  = time.Minute
	maxCodeTries = 32
)

// newCode draws a code from crypto/rand, rejecting the bytes that would
// make some letters likelier than others.
func newCode() (string, error) {
	var out [codeLen]byte
	var buf [16]byte
	n := 0
	for n < codeLen {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", fmt.Errorf("no randomness for an approval code: %w", err)
		}
		for _, c := range buf {
			if c >= 250 { // 250 = 10 × 25: the largest multiple of 25 a byte holds
				continue
			}
			out[n] = codeLetters[c%25]
			if n++; n == codeLen {
				break
			}
		}
	}
	return string(out[:]), nil
}

// validCode reports whether s is a code as claw issues them.
func validCode(s string) bool {
	if len(s) != codeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(codeLetters, rune(s[i])) {
			return false
		}
	}
	return true
}

// answer is a parsed "yes CODE" or "no CODE".
type answer struct {
	approve bool
	code    string
}

// parseAnswer reads an approval answer: "yes", "y", "no" or "n", then a
// code, with nothing else but ASCII spaces and tabs around them; case
// does not matter (ASCII only).
func parseAnswer(s string) (answer, bool) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	if len(f) != 2 || len(f[1]) != codeLen {
		return answer{}, false
	}
	var a answer
	switch asciiLower(f[0]) {
	case "y", "yes":
		a.approve = true
	case "n", "no":
	default:
		return answer{}, false
	}
	a.code = asciiLower(f[1])
	if !validCode(a.code) {
		return answer{}, false
	}
	return a, true
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// prompt is an action waiting for an answer on Discord.
type prompt struct {
	queueID   string
	digest    string
	channelID string // where the prompt was posted
	summary   string
}

// codebook maps live codes to their prompts, remembers spent codes for a
// day (a replayed or late answer is told so, and no code is issued twice
// in that time), and counts wrong codes per user.
type codebook struct {
	mu    sync.Mutex
	live  map[string]prompt
	spent map[string]time.Time // code → until when it stays reserved
	wrong map[string][]time.Time
}

func newCodebook() *codebook {
	return &codebook{live: map[string]prompt{}, spent: map[string]time.Time{}, wrong: map[string][]time.Time{}}
}

// issue gives p a fresh code.
func (cb *codebook) issue(p prompt, now time.Time) (string, error) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for c, until := range cb.spent {
		if now.After(until) {
			delete(cb.spent, c)
		}
	}
	for range maxCodeTries {
		code, err := newCode()
		if err != nil {
			return "", err
		}
		if _, ok := cb.live[code]; ok {
			continue
		}
		if _, ok := cb.spent[code]; ok {
			continue
		}
		cb.live[code] = p
		return code, nil
	}
	return "", errors.New("no free approval code")
}

// Code states.
const (
	codeUnknown = iota
	codeLive
	codeSpent
)

func (cb *codebook) lookup(code string) (prompt, int) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if p, ok := cb.live[code]; ok {
		return p, codeLive
	}
	if _, ok := cb.spent[code]; ok {
		return prompt{}, codeSpent
	}
	return prompt{}, codeUnknown
}

// retire ends a code: it answers "no longer pending" for a day.
func (cb *codebook) retire(code string, now time.Time) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	delete(cb.live, code)
	cb.spent[code] = now.Add(codeReserve)
}

// wrongCode counts a wrong code from user; it reports whether the user
// is over the limit (and should get no answer).
func (cb *codebook) wrongCode(user string, now time.Time) bool {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	ts := cb.wrong[user][:0]
	for _, t := range cb.wrong[user] {
		if now.Sub(t) < wrongWindow {
			ts = append(ts, t)
		}
	}
	ts = append(ts, now)
	cb.wrong[user] = ts
	return len(ts) > maxWrong
}

// Queue is the daemon's approvals queue, as the channel uses it; an
// *approvals.Queue is one. What a person on Discord approves can equally
// be approved with 'claw serve approve', and the first answer wins.
type Queue interface {
	Submit(p approvals.Pending) (id string, expires time.Time, err error)
	Wait(ctx context.Context, id string) (broker.Answer, error)
	Decide(id, decision, approver, actionSHA256 string) error
	Withdraw(id string)
}

type originKey struct{}

// origin is where a turn's message came from.
type origin struct{ channelID, userID string }

// WithOrigin marks ctx as a turn started by userID in channelID, so an
// approval needed by that turn is asked there.
func WithOrigin(ctx context.Context, channelID, userID string) context.Context {
	return context.WithValue(ctx, originKey{}, origin{channelID, userID})
}

func originFrom(ctx context.Context) (origin, bool) {
	o, ok := ctx.Value(originKey{}).(origin)
	return o, ok
}

// renderPrompt is the message that asks for an approval: what the
// terminal prompt shows, escaped the same way, inside a code block so no
// markdown or mention in it takes effect, and the code to answer with.
func renderPrompt(r broker.Request, code string, expires time.Time) string {
	var b strings.Builder
	esc := func(s string) string { return strings.ReplaceAll(s, "`", `\x60`) }
	fmt.Fprintf(&b, "Approval needed (code %s):\n```text\n", code)
	fmt.Fprintf(&b, "tool: %s\n", esc(textesc.String(string(r.Tool))))
	fmt.Fprintf(&b, "risk: %s\n", esc(textesc.String(r.Decision.Risk)))
	for _, rs := range r.Decision.Reasons {
		fmt.Fprintf(&b, "reason: %s (rule %s)\n", esc(textesc.String(rs.Msg)), esc(textesc.String(rs.ID)))
	}
	args := r.Summary
	if len(r.Args) > 0 {
		args = string(r.Args)
		if r.Args[0] != '{' {
			fmt.Fprintf(&b, "summary: %s\n", esc(textesc.Args(r.Summary)))
		}
	}
	fmt.Fprintf(&b, "args: %s\n", esc(textesc.Args(args)))
	sb := r.Decision.Sandbox
	fmt.Fprintf(&b, "sandbox: read=%s write=%s net=%t\n", esc(textesc.String(listOrNone(sb.Read))), esc(textesc.String(listOrNone(sb.Write))), sb.Net)
	fmt.Fprintf(&b, "```\nReply `yes %s` to approve or `no %s` to reject, before %s UTC.", code, code, expires.UTC().Format(time.TimeOnly))
	return b.String()
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ",")
}
