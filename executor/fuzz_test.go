package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/clawsec/claw/executor/internal/child"
)

func FuzzDecodeSpec(f *testing.F) {
	for _, seed := range []string{
		`{"argv":["bash","-c","ls"],"write":["/ws"],"timeout":1000000000}`,
		`{"tool":"file_read","args":{"path":"/ws/a"},"read":["/ws"]}`,
		`{"tool":"http","args":{"url":"https://example.com"},"net":{"ports":[443]}}`,
		`{"argv":["x"],"env":["A=1","PATH"],"limits":{"processes":10},"run_as":"nobody"}`,
		`{"argv":["x"]} {"argv":["y"]}`,
		`{"argv":["x"],"unknown":1}`,
		`{"argv":[]}`,
		`{"tool":"nope"}`,
		`[]`, ``, `{"argv":["a\u0000b"]}`, `{"argv":["x"],"read":["rel/path"]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSpec(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("error does not wrap ErrInvalidSpec: %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("decoded spec does not validate: %v", err)
		}
		// a decoded spec survives a round trip
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeSpec(bytes.NewReader(b)); err != nil {
			t.Fatalf("round trip: %v\n%s", err, b)
		}
	})
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mode":"exec","argv":["/bin/true"],"env":[],"dir":"/","min_abi":6,"uid":-1,"gid":-1,"ro":["/usr"],"bpf":"AAAAAAAAAAA="}`))
	f.Add([]byte(`{"mode":"probe","argv":null,"env":null,"dir":"","min_abi":0,"uid":-1,"gid":-1}`))
	f.Add([]byte(`{"mode":"exec","argv":["x"],"ro":["relative"]}`))
	f.Add([]byte(`{"mode":"exec","argv":["x"],"bpf":"AAA="}`))
	f.Add([]byte(`{"mode":"exec","argv":["claw-sandbox","__sandbox-tool","file_read"],"in_process":true,"min_abi":7,"uid":-1,"gid":-1}`))
	f.Add([]byte(`{"mode":"exec","argv":["x"],"in_process":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := child.ParseConfig(data)
		if err != nil {
			return
		}
		if c.InProcess && (len(c.Argv) != 3 || c.Argv[1] != child.EntryTool || c.Argv[2] == "") {
			t.Fatalf("accepted in_process with argv %q", c.Argv)
		}
		if len(c.BPF)%8 != 0 {
			t.Fatalf("accepted a malformed program of %d bytes", len(c.BPF))
		}
		for _, p := range append(append(c.RO, c.RW...), c.Dev...) {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("accepted relative path %q", p)
			}
		}
	})
}

func FuzzToolArgs(f *testing.F) {
	f.Add("file_read", []byte(`{"path":"/nonexistent/x"}`))
	f.Add("edit_file", []byte(`{"path":"/nonexistent/x","old":"a","new":"b"}`))
	f.Add("file_list", []byte(`{"path":"/nonexistent","depth":-1}`))
	f.Add("file_write", []byte(`{"path":"relative","content":"x"}`))
	f.Add("http", []byte(`{"url":"ftp://x"}`))
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		if name == child.ToolFileWrite || name == child.ToolEditFile || name == child.ToolHTTP {
			return // side effects; their decoders are the same StrictJSON
		}
		child.RunTool(name, args) // must not panic
	})
}

func TestCapture(t *testing.T) {
	cases := []struct {
		name      string
		max       int64
		writes    []string
		want      string
		truncated bool
	}{
		{name: "fits", max: 10, writes: []string{"abc", "def"}, want: "abcdef"},
		{name: "exact", max: 6, writes: []string{"abcdef"}, want: "abcdef"},
		{name: "head and tail", max: 6, writes: []string{"abc", "defgh", "ijk"}, want: "abc" + truncationMark + "ijk", truncated: true},
		{name: "many small", max: 4, writes: strings.Split("abcdefghij", ""), want: "ab" + truncationMark + "ij", truncated: true},
		{name: "one big", max: 4, writes: []string{"abcdefghij"}, want: "ab" + truncationMark + "ij", truncated: true},
		{name: "tail wraps", max: 4, writes: []string{"ab", "cd", "e", "f", "g"}, want: "ab" + truncationMark + "fg", truncated: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp := newCapture(c.max)
			n := int64(0)
			for _, w := range c.writes {
				cp.Write([]byte(w))
				n += int64(len(w))
			}
			got, tr := cp.bytes()
			if string(got) != c.want || tr != c.truncated || cp.total != n {
				t.Fatalf("got %q truncated %v total %d, want %q %v %d", got, tr, cp.total, c.want, c.truncated, n)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		spec Spec
		ok   bool
	}{
		{name: "shell", spec: Spec{Argv: []string{"ls"}}, ok: true},
		{name: "empty", spec: Spec{}},
		{name: "relative read", spec: Spec{Argv: []string{"ls"}, Read: []string{"ws"}}},
		{name: "nul in arg", spec: Spec{Argv: []string{"ls", "a\x00"}}},
		{name: "tool with argv", spec: Spec{Tool: ToolFileRead, Argv: []string{"x"}, Args: []byte(`{}`)}},
		{name: "tool without args", spec: Spec{Tool: ToolFileRead}},
		{name: "unknown tool", spec: Spec{Tool: "rm", Args: []byte(`{}`)}},
		{name: "secret env", spec: Spec{Argv: []string{"ls"}, Env: []string{"GITHUB_TOKEN"}}},
		{name: "aws env", spec: Spec{Argv: []string{"ls"}, Env: []string{"AWS_PROFILE=x"}}},
		{name: "bad env name", spec: Spec{Argv: []string{"ls"}, Env: []string{"1A=x"}}},
		{name: "port zero", spec: Spec{Argv: []string{"ls"}, Net: Net{Ports: []uint16{0}}}},
		{name: "fine env", spec: Spec{Argv: []string{"ls"}, Env: []string{"GOFLAGS=-mod=mod", "LANG"}}, ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.spec.Validate()
			if (err == nil) != c.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("error does not wrap ErrInvalidSpec: %v", err)
			}
		})
	}
}
