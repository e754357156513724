package child

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzStatusLine: a status line is one line of valid JSON that the parent
// decodes to what encoding/json's encoding of the same Status decodes to,
// whatever its strings hold (quotes, control characters, bytes that are
// not UTF-8, <, > and &).
func FuzzStatusLine(f *testing.F) {
	f.Add("ready", "", 0, 7, 0, 0, 0, true, true, true, false)
	f.Add("exec", "x: \"no\\such\" file\n\x00\xff\u2028<&>", 127, 0, -1, 0, 0, false, false, false, false)
	f.Add("exit", "", 0, 0, -1, 137, 9, false, false, false, true)
	f.Fuzz(func(t *testing.T, stage, msg string, code, abi, uid, exit, signal int, proc, mount, caps, alone bool) {
		s := Status{Stage: stage, Code: code, Err: msg, ABI: abi, Proc: proc, Mount: mount, Caps: caps, UID: uid, Exit: exit, Signal: signal, Alone: alone}
		line := s.Line()
		if i := bytes.IndexByte(line, '\n'); i != len(line)-1 {
			t.Fatalf("%q is not one line", line)
		}
		var got, want Status
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		ref, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%q decodes to %+v; encoding/json's %s to %+v", line, got, ref, want)
		}
	})
}
