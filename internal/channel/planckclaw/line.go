package planckclaw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/clawsec/claw/internal/textesc"
)

// Bounds of a line.
const (
	// MaxToolLine bounds a line of claw_in.
	MaxToolLine = 64 << 10
	// MaxInteractLine bounds a line of interact_in.
	MaxInteractLine = 16 << 10
	// MaxResult bounds a result written to claw_out, so that it fits in
	// the pipe's buffer (64 KiB on Linux) with room to spare.
	MaxResult = 60 << 10
)

// ToolRequest is one line of claw_in: a discovery (List) or a call.
type ToolRequest struct {
	List  bool
	Name  string
	Input json.RawMessage // a JSON object
}

var toolNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`) })

// ParseToolLine decodes one line of claw_in (without its newline; a
// trailing CR is dropped): "list_tools" or "__list_tools__", or
// NAME TAB INPUT_JSON where INPUT_JSON is a JSON object (empty is {}).
func ParseToolLine(line []byte) (ToolRequest, error) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if s := string(line); s == "list_tools" || s == "__list_tools__" {
		return ToolRequest{List: true}, nil
	}
	name, input, ok := bytes.Cut(line, []byte("\t"))
	if !ok {
		return ToolRequest{}, errors.New("expected list_tools or NAME<TAB>INPUT_JSON")
	}
	if !toolNameRe().Match(name) {
		return ToolRequest{}, errors.New("tool name must be 1..128 letters, digits and _ . : -")
	}
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		input = []byte("{}")
	}
	if !utf8.Valid(input) || !json.Valid(input) || input[0] != '{' {
		return ToolRequest{}, fmt.Errorf("the input of %s is not a JSON object", name)
	}
	var b bytes.Buffer
	json.Compact(&b, input)
	return ToolRequest{Name: string(name), Input: b.Bytes()}, nil
}

// EncodeResult frames a result for claw_out: the text, valid UTF-8, cut
// at MaxResult, with no blank line inside (runs of newlines collapse to
// one, so "\n\n" only ends the frame), then "\n\n".
func EncodeResult(text string) []byte {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) > MaxResult {
		text = textesc.Prefix(text, MaxResult) + "\n[result cut at " + fmt.Sprint(MaxResult) + " bytes]"
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	for strings.Contains(text, "\n\n") {
		text = strings.ReplaceAll(text, "\n\n", "\n")
	}
	text = strings.Trim(text, "\n")
	if text == "" {
		text = "(no output)"
	}
	return []byte(text + "\n\n")
}

var channelIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,20}$`) })

// ParseInteractLine decodes one line of interact_in (without its
// newline): CHANNEL_ID TAB TEXT, the id 1 to 20 digits, TEXT with \n, \t
// and \\ unescaped (any other backslash is kept as it is) and valid UTF-8.
func ParseInteractLine(line []byte) (id, text string, err error) {
	rawID, rawText, ok := bytes.Cut(line, []byte("\t"))
	if !ok || !channelIDRe().Match(rawID) {
		return "", "", errors.New("expected CHANNEL_ID<TAB>TEXT with a channel id of 1..20 digits")
	}
	if !utf8.Valid(rawText) {
		return string(rawID), "", errors.New("the text is not valid UTF-8")
	}
	return string(rawID), Unescape(string(rawText)), nil
}

// LineID is the channel id a line starts with, when it has one (to answer
// a line that cannot be read).
func LineID(line []byte) (string, bool) {
	id, _, ok := bytes.Cut(line, []byte("\t"))
	if !ok || !channelIDRe().Match(id) {
		return "", false
	}
	return string(id), true
}

// Escape writes text for one line of interact_out: \ as \\, newline as
// \n, tab as \t.
func Escape(text string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`).Replace(text)
}

// Unescape is the inverse of Escape; a backslash before any other
// character, or at the end, is kept as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\':
			b.WriteByte('\\')
		default:
			b.WriteByte('\\')
			continue
		}
		i++
	}
	return b.String()
}

// EncodeInteract frames a reply for interact_out.
func EncodeInteract(id, text string) []byte {
	return []byte(id + "\t" + Escape(strings.ToValidUTF8(text, "\uFFFD")) + "\n")
}
