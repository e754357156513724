package discord

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeFrame: an accepted frame is in bounds (opcode 0..255, no
// negative sequence, an event name exactly on dispatches) and survives a
// round trip; a MESSAGE_CREATE accepted from it has snowflake ids and
// bounded content.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"op":10,"d":{"heartbeat_interval":41250}}`,
		`{"op":11}`,
		`{"op":0,"s":2,"t":"READY","d":{"session_id":"abc","resume_gateway_url":"wss://x","user":{"id":"900000000000000001","bot":true}}}`,
		`{"op":0,"s":3,"t":"MESSAGE_CREATE","d":{"id":"1100000000000000001","channel_id":"200000000000000001","author":{"id":"100000000000000001"},"content":"<@900000000000000001> hi","mentions":[{"id":"900000000000000001"}]}}`,
		`{"op":7,"d":null}`, `{"op":9,"d":false}`, `{"op":1,"d":null}`,
		`{"op":0,"t":"","s":1}`, `{"op":-1}`, `{"op":1,"t":"X"}`, `{"op":0,"s":-5,"t":"X"}`, `{} {}`, `[1]`, `nul`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := decodeFrame(b)
		if err != nil {
			if !strings.Contains(err.Error(), errFrame.Error()) {
				t.Fatalf("error %q does not wrap errFrame", err)
			}
			return
		}
		if fr.Op < 0 || fr.Op > 255 || fr.S != nil && *fr.S < 0 || (fr.Op == opDispatch) != (fr.T != "") || len(fr.T) > 64 {
			t.Fatalf("accepted an out-of-bounds frame: %+v", fr)
		}
		again, err := json.Marshal(fr)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		fr2, err := decodeFrame(again)
		if err != nil {
			t.Fatalf("a re-encoded frame is refused: %v\n%s", err, again)
		}
		if fr2.Op != fr.Op || fr2.T != fr.T || (fr2.S == nil) != (fr.S == nil) || fr.S != nil && *fr2.S != *fr.S {
			t.Fatalf("round trip changed the frame: %+v → %+v", fr, fr2)
		}
		if fr.T != "MESSAGE_CREATE" {
			return
		}
		m, err := decodeMessage(fr.D)
		if err != nil {
			return
		}
		for _, id := range []string{m.ID, m.ChannelID, m.Author.ID} {
			if !snowflake(id) {
				t.Fatalf("accepted a message with id %q", id)
			}
		}
		if m.GuildID != "" && !snowflake(m.GuildID) || m.WebhookID != "" && !snowflake(m.WebhookID) || len(m.Content) > maxContent || len(m.Mentions) > 100 {
			t.Fatalf("accepted an out-of-bounds message: %+v", m)
		}
	})
}

// FuzzParseAnswer: an accepted answer has a code as claw issues them;
// the decision is the first word's; parsing is ASCII-case-insensitive and
// ignores surrounding blanks; and the canonical form parses back to the
// same answer.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{"yes abcde", "no abcde", "Y ABCDE", " n\tzzzzz ", "yes abcdl", "yes abcd", "yes abcdef", "yess abcde",
		"yes abcde please", "yes ａbcde", "yes \u212abcde", "", "yes", "no  mnopq\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := parseAnswer(s)
		if !ok {
			if _, ok2 := parseAnswer(strings.ToUpper(s)); ok2 && utf8.ValidString(s) && isASCII(s) {
				t.Fatalf("%q is refused but its upper case is accepted", s)
			}
			return
		}
		if !validCode(a.code) || strings.ContainsRune(a.code, 'l') || len(a.code) != codeLen {
			t.Fatalf("accepted code %q from %q", a.code, s)
		}
		first := asciiLower(strings.Fields(s)[0])
		if a.approve != (first == "y" || first == "yes") {
			t.Fatalf("%q: approve = %t", s, a.approve)
		}
		if !strings.Contains(asciiLower(s), a.code) {
			t.Fatalf("%q: the code %q is not in the text", s, a.code)
		}
		word := "no"
		if a.approve {
			word = "yes"
		}
		for _, canon := range []string{word + " " + a.code, " " + strings.ToUpper(word) + "\t" + strings.ToUpper(a.code) + " "} {
			if b, ok := parseAnswer(canon); !ok || b != a {
				t.Fatalf("%q parses to %+v, %t; want %+v", canon, b, ok, a)
			}
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// FuzzSplit: every message is within the limit, not blank, valid UTF-8
// when the text is, and leaves no code block open that it did not find
// open; and the messages hold the text's content in order (only line
// breaks between messages and the fence lines added to close and reopen a
// block differ; checked where fences are bare, so that reopening a block
// adds only backticks).
func FuzzSplit(f *testing.F) {
	f.Add("hello", 50)
	f.Add("a\n```go\nx := 1\ny := 2\nz := 3\n```\nafter", 20)
	f.Add(strings.Repeat("word ", 100), 30)
	f.Add("```\n"+strings.Repeat("é", 80)+"\n```", 25)
	f.Add(strings.Repeat("😀", 40), 11)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit < 16 || limit > 4000 || len(text) > 1<<16 {
			return
		}
		chunks := split(text, limit)
		for i, c := range chunks {
			if units(c) > limit {
				t.Fatalf("chunk %d has %d units, limit %d", i, units(c), limit)
			}
			if strings.TrimSpace(c) == "" {
				t.Fatalf("chunk %d is blank", i)
			}
			if utf8.ValidString(text) && !utf8.ValidString(c) {
				t.Fatalf("chunk %d is not UTF-8: %q", i, c)
			}
		}
		// The content check holds where reopening a block adds nothing but
		// backticks: when every fence line of the text is a bare fence (and
		// the text is UTF-8, as every reply sent as JSON is).
		if !utf8.ValidString(text) {
			return
		}
		for _, l := range strings.Split(text, "\n") {
			if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, fence) && strings.TrimRight(t, "`") != "" {
				return
			}
		}
		squash := func(s string) string {
			s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "`", "")
			return strings.Join(strings.Fields(s), "")
		}
		var all strings.Builder
		for _, c := range chunks {
			all.WriteString(c + "\n")
		}
		if a, b := squash(all.String()), squash(text); a != b {
			t.Fatalf("the messages do not hold the text:\n got %q\nwant %q", a, b)
		}
	})
}
