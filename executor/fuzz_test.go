package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/clawsec/claw/executor/internal/child"
	"github.com/clawsec/claw/internal/toolkind"
)

// sameJSON reports whether a and b hold the same JSON value: encoding a
// Spec compacts its arguments and escapes <, > and &.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// FuzzDecodeSpec: an accepted spec is one JSON value that keeps every
// bound Validate documents (checked here on their own, not by calling
// Validate), and survives an encode and decode unchanged; a refused one
// wraps ErrInvalidSpec and comes back as the zero Spec.
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
		`{"argv":["x"]}]`, `{"argv":["x"]} }`, `{"tool":"http","Args":[]}}`,
		`{"tool":"file_list","args":{ "path" : "/<a>" },"stdin":"","cwd":"/w","read":[],"net":{"ports":[]}}`,
		`{"argv":["x"],"env":["github_token=1"]}`, `{"argv":["x"],"max_output":268435457}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSpec(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("error does not wrap ErrInvalidSpec: %v", err)
			}
			if !reflect.DeepEqual(s, Spec{}) {
				t.Fatalf("refused spec %q came back as %+v", data, s)
			}
			return
		}
		if len(data) > MaxSpecBytes || !json.Valid(data) {
			t.Fatalf("accepted %q: not one JSON value of at most %d bytes", data, MaxSpecBytes)
		}
		checkSpecBounds(t, s)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeSpec(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("round trip: %v\n%s", err, b)
		}
		if !sameJSON(s.Args, back.Args) {
			t.Fatalf("round trip of %s changed the args to %s", b, back.Args)
		}
		s.Args, back.Args = nil, nil
		if diff := cmp.Diff(s, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip of %s changed the spec (-decoded +again):\n%s", b, diff)
		}
	})
}

// checkSpecBounds checks what Validate promises of a spec it accepted.
func checkSpecBounds(t *testing.T, s Spec) {
	t.Helper()
	switch s.Tool {
	case "", ToolShell:
		if len(s.Argv) == 0 || s.Argv[0] == "" || len(s.Args) != 0 {
			t.Fatalf("accepted shell spec with argv %q and args %s", s.Argv, s.Args)
		}
	case ToolFileRead, ToolFileWrite, ToolEditFile, ToolFileList, ToolHTTP:
		if len(s.Argv) != 0 || !json.Valid(s.Args) || len(s.Stdin) != 0 {
			t.Fatalf("accepted %s spec with argv %q, args %s, %d bytes of stdin", s.Tool, s.Argv, s.Args, len(s.Stdin))
		}
	default:
		t.Fatalf("accepted unknown tool %q", s.Tool)
	}
	for _, a := range s.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			t.Fatalf("accepted argument %q", a)
		}
	}
	paths := append(append([]string{}, s.Read...), s.Write...)
	if s.Cwd != "" {
		paths = append(paths, s.Cwd)
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
			t.Fatalf("accepted path %q", p)
		}
	}
	for _, p := range s.Net.Ports {
		if p == 0 {
			t.Fatal("accepted port 0")
		}
	}
	for _, e := range s.Env {
		name, _, _ := strings.Cut(e, "=")
		if !envName.MatchString(name) {
			t.Fatalf("accepted variable name %q", name)
		}
		u := strings.ToUpper(name)
		for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "KEY", "AWS_", "CLAW_"} {
			if strings.Contains(u, w) {
				t.Fatalf("accepted secret-looking variable %q", name)
			}
		}
	}
	if s.Timeout < 0 || s.MaxOutput < 0 || s.MaxOutput > 256<<20 || s.MinLandlockABI < 0 {
		t.Fatalf("accepted limits timeout %v, max_output %d, min ABI %d", s.Timeout, s.MaxOutput, s.MinLandlockABI)
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// FuzzArmedRequest: an armed worker's request, read as a frame from what
// follows its config, is accepted only when it is one strict JSON value
// that Apply turns into an exec of a non-empty argv in an absolute (or no)
// directory; a worker holding a tool's program accepts only that tool's
// argv. A frame read back is what was written.
func FuzzArmedRequest(f *testing.F) {
	f.Add(false, []byte(`{"argv":["bash","-c","true"],"env":["PATH=/bin"],"dir":"/ws"}`))
	f.Add(true, []byte(`{"argv":["claw-sandbox","__sandbox-tool","file_read"],"env":[],"dir":"/"}`))
	f.Add(true, []byte(`{"argv":["bash","-c","id"],"env":[],"dir":"/"}`))
	f.Add(false, []byte(`{"argv":[],"dir":"/"}`))
	f.Add(false, []byte(`{"argv":["x"],"dir":"rel"}`))
	f.Add(false, []byte(`{"argv":["x"],"uid":0}`))
	f.Add(false, []byte(`{"argv":["x"]}{}`))
	f.Fuzz(func(t *testing.T, tool bool, data []byte) {
		var framed bytes.Buffer
		if err := child.WriteFrame(&framed, data); err != nil {
			t.Fatal(err)
		}
		back, err := child.ReadFrame(&framed)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("frame round trip: %q, %v", back, err)
		}
		if got, err := child.ReadFrame(bytes.NewReader(data)); err == nil && len(got) > child.MaxConfigBytes {
			t.Fatalf("read a frame of %d bytes", len(got))
		}
		c := &child.Config{Mode: child.ModeArmed, UID: -1, GID: -1}
		if tool {
			c.Exe, c.InProcess = "/h/claw-sandbox", true
		}
		r, err := child.ParseRequest(data)
		if err != nil {
			if r != nil {
				t.Fatalf("refused request %q came back as %+v", data, r)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted %q: not one JSON value", data)
		}
		if err := c.Apply(r); err != nil {
			return
		}
		if c.Mode != child.ModeExec || len(c.Argv) == 0 || c.Argv[0] == "" {
			t.Fatalf("applied %q: mode %s argv %q", data, c.Mode, c.Argv)
		}
		if c.Dir != "" && !strings.HasPrefix(c.Dir, "/") {
			t.Fatalf("applied a relative directory %q", c.Dir)
		}
		if tool && (len(c.Argv) != 3 || c.Argv[1] != child.EntryTool || c.Argv[2] == "") {
			t.Fatalf("a tool worker accepted argv %q", c.Argv)
		}
		if c.UID != -1 || c.GID != -1 || c.Exe != "" && !tool {
			t.Fatalf("the request changed the confinement: %+v", c)
		}
	})
}

// FuzzParseConfig: an accepted config is the one encoding of a config
// (MarshalConfig gives back the same bytes) with a known mode, a command
// to exec, a whole seccomp program of at most 65535 instructions,
// absolute paths, no NUL byte in any string, in_process only for a tool
// entry and never with cgroups the child joins, and it survives an
// encode and parse unchanged; a refused one is nil.
func FuzzParseConfig(f *testing.F) {
	valid, invalid := configSeeds()
	for _, c := range slices.Concat(valid, invalid) {
		f.Add(child.MarshalConfig(c))
	}
	good := child.MarshalConfig(valid[0])
	f.Add(good[:len(good)-1])                              // truncated
	f.Add(append(slices.Clone(good), 0))                   // trailing data
	f.Add(append([]byte("claw-config-2\n"), good[14:]...)) // another build's
	f.Add([]byte(`{"mode":"exec","argv":["/bin/true"],"env":[],"dir":"/","min_abi":6,"uid":-1,"gid":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := child.ParseConfig(data)
		if err != nil {
			if c != nil {
				t.Fatalf("refused config %q came back as %+v", data, c)
			}
			return
		}
		if again := child.MarshalConfig(c); !bytes.Equal(again, data) {
			t.Fatalf("accepted %q, which encodes as %q", data, again)
		}
		switch c.Mode {
		case child.ModeExec:
			if len(c.Argv) == 0 || c.Argv[0] == "" {
				t.Fatalf("accepted exec of argv %q", c.Argv)
			}
		case child.ModeProbe:
		case child.ModeArmed:
			if len(c.Argv) != 0 || len(c.Env) != 0 || c.Dir != "" {
				t.Fatalf("accepted an armed config with a command: %q %q %q", c.Argv, c.Env, c.Dir)
			}
			if c.InProcess && c.Exe == "" {
				t.Fatal("accepted an armed in_process config without the tool's program")
			}
		default:
			t.Fatalf("accepted mode %q", c.Mode)
		}
		if c.InProcess && c.Mode != child.ModeArmed && (c.Mode != child.ModeExec || len(c.Argv) != 3 || c.Argv[1] != child.EntryTool || c.Argv[2] == "") {
			t.Fatalf("accepted in_process with argv %q", c.Argv)
		}
		if c.InProcess && len(c.Cgroups) > 0 {
			t.Fatalf("accepted in_process with cgroups %q for the child to join", c.Cgroups)
		}
		if len(c.BPF)%8 != 0 || len(c.BPF)/8 > 0xffff {
			t.Fatalf("accepted a malformed program of %d bytes", len(c.BPF))
		}
		paths := slices.Concat(c.RO, c.RW, c.Dev, c.Protect, c.Cgroups)
		if c.Exe != "" {
			paths = append(paths, c.Exe)
		}
		if c.Dir != "" {
			paths = append(paths, c.Dir)
		}
		for _, p := range paths {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("accepted relative path %q", p)
			}
		}
		for _, s := range slices.Concat(paths, c.Argv, c.Env, []string{c.Mode, c.Hostname}) {
			if strings.IndexByte(s, 0) >= 0 {
				t.Fatalf("accepted a NUL byte in %q", s)
			}
		}
		back, err := child.ParseConfig(child.MarshalConfig(c))
		if err != nil {
			t.Fatalf("round trip: %v", err)
		}
		if diff := cmp.Diff(c, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip changed the config (-parsed +again):\n%s", diff)
		}
	})
}

// TestConfigRoundTrip: the configs the executor writes, a seccomp
// program with NUL bytes in it included, parse back as they were.
func TestConfigRoundTrip(t *testing.T) {
	valid, invalid := configSeeds()
	for _, c := range valid {
		back, err := child.ParseConfig(child.MarshalConfig(c))
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if diff := cmp.Diff(c, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip changed the config (-written +parsed):\n%s", diff)
		}
	}
	for _, c := range invalid {
		if back, err := child.ParseConfig(child.MarshalConfig(c)); err == nil {
			t.Errorf("accepted %+v", back)
		}
	}
}

// configSeeds are configs as the executor writes them, and configs a
// parser must refuse.
func configSeeds() (valid, invalid []*child.Config) {
	bpf := []byte{0x20, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0xff, 0x7f} // ld arch; ret allow
	valid = []*child.Config{
		{Mode: child.ModeExec, Argv: []string{"/bin/true"}, Env: []string{"HOME=/h", "PATH=/usr/bin:/bin"}, Dir: "/",
			RO: []string{"/usr", "/etc/passwd"}, RW: []string{"/h", "/ws"}, Protect: []string{"/ws/.git/hooks"}, Dev: []string{"/dev/null"},
			Net: true, TCPPorts: []uint16{443, 65535}, UDPPorts: []uint16{53}, MinABI: 6, MountNS: true, MountProc: true, Hostname: "claw",
			Cgroups: []string{"/sys/fs/cgroup/pids/claw-1-1"}, CgroupNS: true, UID: 65534, GID: 65534,
			Limits: []child.Rlimit{{Resource: 0, Max: 120}, {Resource: 7, Max: 1<<64 - 1}}, BPF: bpf},
		{Mode: child.ModeProbe, UID: -1, GID: -1, Degraded: true},
		{Mode: child.ModeExec, Argv: []string{"claw-sandbox", child.EntryTool, "file_read"}, Exe: "/h/claw-sandbox", InProcess: true, MinABI: 7, UID: -1, GID: -1},
		{Mode: child.ModeArmed, Exe: "/h/claw-sandbox", InProcess: true, MinABI: 7, UID: -1, GID: -1, RO: []string{"/usr"}, EgressPort: 8080},
	}
	invalid = []*child.Config{
		{Mode: child.ModeArmed, Argv: []string{"x"}, MinABI: 7, UID: -1, GID: -1},
		{Mode: child.ModeArmed, InProcess: true, UID: -1, GID: -1},
		{Mode: child.ModeExec, Argv: []string{"x"}, RO: []string{"relative"}},
		{Mode: child.ModeExec, Argv: []string{"x"}, BPF: []byte{1, 2, 3}},
		{Mode: child.ModeExec, Argv: []string{"x"}, InProcess: true},
		{Mode: child.ModeExec, Argv: []string{"x"}, Exe: "rel", Dir: "/"},
		{Mode: child.ModeExec, Argv: []string{"x"}, Cgroups: []string{"claw-1-1"}},
		{Mode: child.ModeExec, Argv: []string{"claw-sandbox", child.EntryTool, "file_read"}, InProcess: true, Cgroups: []string{"/sys/fs/cgroup/pids/claw-1-1"}},
		{Mode: child.ModeExec, Argv: []string{"x\x00y"}},
		{Mode: "run", Argv: []string{"x"}},
	}
	return valid, invalid
}

// toolTree is the tree FuzzToolArgs runs the tools in: text, binary and
// invalid UTF-8 files, nested directories and symlinks.
var toolTree = map[string]string{
	"a.txt":         "hello\n",
	"u.txt":         strings.Repeat("aé€😀", 40),
	"nul.bin":       "a\x00b",
	"bad.txt":       "ok\xff\xfe",
	"d/x.txt":       "x",
	"d/e/y.txt":     "yy",
	"d/e/f/g/h.txt": "deep",
	"d/e/f/g/i/j/k": "deeper",
	"empty/":        "",
	"d/link":        "-> ../a.txt",
	"d/dirlink":     "-> e",
	"d/dangling":    "-> nope",
}

func makeToolTree(t testing.TB, root string) {
	t.Helper()
	for name, content := range toolTree {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch target, link := strings.CutPrefix(content, "-> "); {
		case link:
			err = os.Symlink(target, p)
		case strings.HasSuffix(name, "/"):
			err = os.MkdirAll(p, 0o755)
		default:
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot is every file of a tree with its mode and content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " " + l
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func clamp(v, def, hard int64) int64 {
	if v <= 0 {
		return def
	}
	return min(v, hard)
}

// FuzzToolArgs runs the file tools on arbitrary arguments. Arguments that
// do not decode strictly, or name no absolute path, are refused before
// anything is touched; the others run on a tree of their own (the path
// taken inside it). Then: file_read returns UTF-8 text without NUL, a
// prefix of the file within its size cap, the whole file unless it says
// it truncated, and does not fail on a text file; file_list returns
// sorted, unique, local entries within its depth and entry caps that are
// what the tree holds, and all of them unless it says it truncated;
// file_write leaves exactly the content with the mode asked; edit_file
// replaces the one occurrence; a failed write or edit changes nothing.
func FuzzToolArgs(f *testing.F) {
	f.Add("file_read", []byte(`{"path":"/nonexistent/x"}`))
	f.Add("file_read", []byte(`{"path":"/u.txt","max_bytes":7}`))
	f.Add("file_read", []byte(`{"path":"/d/link"}`))
	f.Add("file_read", []byte(`{"path":"/nul.bin"}`))
	f.Add("file_read", []byte(`{"path":"/a.txt"}]`))
	f.Add("edit_file", []byte(`{"path":"/nonexistent/x","old":"a","new":"b"}`))
	f.Add("edit_file", []byte(`{"path":"/u.txt","old":"€😀a","new":""}`))
	f.Add("edit_file", []byte(`{"path":"/a.txt","old":"hello","new":"bye"}`))
	f.Add("file_list", []byte(`{"path":"/nonexistent","depth":-1}`))
	f.Add("file_list", []byte(`{"path":"/","depth":2,"max_entries":3}`))
	f.Add("file_list", []byte(`{"path":"/d/","max_entries":100}`))
	f.Add("file_write", []byte(`{"path":"relative","content":"x"}`))
	f.Add("file_write", []byte(`{"path":"/d/new.txt","content":"x","mode":384}`))
	f.Add("file_write", []byte(`{"path":"/d/link","content":"x"}`))
	f.Add("file_write", []byte(`{"path":"/a.txt","content":"longer","max_bytes":3}`))
	f.Add("http", []byte(`{"url":"ftp://x"}`))
	f.Add("rm", []byte(`{}`))
	fixture := f.TempDir()
	makeToolTree(f, fixture)
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		if toolkind.Kind(name) == child.ToolHTTP {
			return // the network; its decoder is the same StrictJSON
		}
		var path string
		var decoded any
		switch toolkind.Kind(name) {
		case child.ToolFileRead:
			var a child.FileReadArgs
			decoded, path = &a, strictPath(args, &a, &a.Path)
		case child.ToolFileWrite:
			var a child.FileWriteArgs
			decoded, path = &a, strictPath(args, &a, &a.Path)
		case child.ToolEditFile:
			var a child.EditFileArgs
			decoded, path = &a, strictPath(args, &a, &a.Path)
		case child.ToolFileList:
			var a child.FileListArgs
			decoded, path = &a, strictPath(args, &a, &a.Path)
		}
		if path == "" {
			out, err := child.RunTool(name, args)
			if err == nil || !isNil(out) {
				t.Fatalf("%s %q: %v, %v; want an error and no payload", name, args, out, err)
			}
			return
		}
		if !json.Valid(args) {
			t.Fatalf("%s accepted arguments %q: not one JSON value", name, args)
		}
		root := fixture
		if k := toolkind.Kind(name); k == child.ToolFileWrite || k == child.ToolEditFile {
			root = t.TempDir()
			makeToolTree(t, root)
		}
		inTree := filepath.Join(root, path)
		if inTree != root && !strings.HasPrefix(inTree, root+"/") {
			return
		}
		// the decoded arguments, encoded again with the path in the tree
		reflect.ValueOf(decoded).Elem().FieldByName("Path").SetString(inTree)
		args, err := json.Marshal(decoded)
		if err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, root)
		out, err := child.RunTool(name, args)
		again, err2 := child.RunTool(name, args)
		if toolkind.Kind(name) == child.ToolFileRead || toolkind.Kind(name) == child.ToolFileList {
			if (err == nil) != (err2 == nil) || !reflect.DeepEqual(out, again) {
				t.Fatalf("%s %s is not deterministic: %v, %v then %v, %v", name, args, out, err, again, err2)
			}
			if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
				t.Fatalf("%s %s changed the tree", name, args)
			}
		}
		if err != nil {
			if !isNil(out) {
				t.Fatalf("%s %s: payload %v with error %v", name, args, out, err)
			}
			if k := toolkind.Kind(name); k == child.ToolFileWrite || k == child.ToolEditFile {
				if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
					t.Fatalf("failed %s %s changed the tree: %v", name, args, err)
				}
			}
		}
		switch a := decoded.(type) {
		case *child.FileReadArgs:
			checkFileRead(t, *a, out, err)
		case *child.FileListArgs:
			checkFileList(t, root, *a, out, err)
		case *child.FileWriteArgs:
			if err == nil {
				checkFileWrite(t, *a, out)
			}
		case *child.EditFileArgs:
			if err == nil {
				checkEditFile(t, before, root, *a, out)
			}
		}
	})
}

// strictPath decodes args into v as the tools do and returns the path it
// names, or "" when the tool would refuse the arguments before touching
// anything.
func strictPath(args []byte, v any, path *string) string {
	if child.StrictJSON(args, v) != nil || !filepath.IsAbs(*path) || strings.IndexByte(*path, 0) >= 0 {
		return ""
	}
	return *path
}

func isNil(v any) bool {
	return v == nil || reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil()
}

func checkFileRead(t *testing.T, a child.FileReadArgs, out any, err error) {
	t.Helper()
	want, rerr := os.ReadFile(a.Path)
	text := rerr == nil && utf8.Valid(want) && bytes.IndexByte(want, 0) < 0
	if err != nil {
		if text {
			t.Fatalf("file_read %+v failed on a text file: %v", a, err)
		}
		return
	}
	r := out.(*child.FileReadResult)
	max := clamp(a.MaxBytes, child.DefaultReadMax, child.HardReadMax)
	switch {
	case rerr != nil:
		t.Fatalf("file_read %+v read what cannot be read: %v", a, rerr)
	case !utf8.ValidString(r.Content) || strings.IndexByte(r.Content, 0) >= 0:
		t.Fatalf("file_read %+v returned binary %q", a, r.Content)
	case int64(len(r.Content)) > max || !strings.HasPrefix(string(want), r.Content):
		t.Fatalf("file_read %+v returned %q, not a prefix of %q within %d bytes", a, r.Content, want, max)
	case r.Size != int64(len(want)) || r.Truncated != (r.Size > max):
		t.Fatalf("file_read %+v: size %d truncated %v, file of %d bytes", a, r.Size, r.Truncated, len(want))
	case !r.Truncated && r.Content != string(want):
		t.Fatalf("file_read %+v returned %q of %q without saying it truncated", a, r.Content, want)
	case r.Truncated && int64(len(r.Content)) <= max-utf8.UTFMax:
		t.Fatalf("file_read %+v returned %d bytes, cut more than a rune off %d", a, len(r.Content), max)
	}
}

func checkFileList(t *testing.T, root string, a child.FileListArgs, out any, err error) {
	t.Helper()
	if err != nil {
		if fi, serr := os.Lstat(a.Path); serr == nil && fi.IsDir() {
			t.Fatalf("file_list %+v failed on a directory: %v", a, err)
		}
		return
	}
	r := out.(*child.FileListResult)
	depth := a.Depth
	if depth <= 0 {
		depth = child.DefaultListDepth
	}
	depth = min(depth, child.MaxListDepth)
	max := int(clamp(int64(a.MaxEntries), child.DefaultListMax, child.HardListMax))
	if len(r.Entries) > max || r.Truncated && len(r.Entries) != max {
		t.Fatalf("file_list %+v: %d entries, truncated %v, cap %d", a, len(r.Entries), r.Truncated, max)
	}
	seen := map[string]bool{}
	for i, e := range r.Entries {
		if i > 0 && r.Entries[i-1].Path >= e.Path {
			t.Fatalf("file_list %+v: entries not sorted and unique at %q", a, e.Path)
		}
		if !filepath.IsLocal(e.Path) || filepath.Clean(e.Path) != e.Path {
			t.Fatalf("file_list %+v: entry %q is not a clean local path", a, e.Path)
		}
		if n := strings.Count(e.Path, "/") + 1; n > depth {
			t.Fatalf("file_list %+v: entry %q deeper than %d", a, e.Path, depth)
		}
		fi, err := os.Lstat(filepath.Join(a.Path, e.Path))
		if err != nil {
			t.Fatalf("file_list %+v listed %q, which is not there: %v", a, e.Path, err)
		}
		want := "other"
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			want = "symlink"
		case fi.IsDir():
			want = "dir"
		case fi.Mode().IsRegular():
			want = "file"
		}
		if e.Type != want || want == "file" && e.Size != fi.Size() {
			t.Fatalf("file_list %+v: entry %+v, the tree has a %s of %d bytes", a, e, want, fi.Size())
		}
		seen[e.Path] = true
	}
	if r.Truncated {
		return
	}
	base := filepath.Clean(a.Path)
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if p == base || err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		if !seen[rel] {
			t.Fatalf("file_list %+v left out %q", a, rel)
		}
		if d.IsDir() && strings.Count(rel, "/")+1 >= depth {
			return fs.SkipDir
		}
		return nil
	})
}

func checkFileWrite(t *testing.T, a child.FileWriteArgs, out any) {
	t.Helper()
	r := out.(*child.FileWriteResult)
	got, err := os.ReadFile(a.Path)
	fi, serr := os.Lstat(a.Path)
	switch {
	case err != nil || serr != nil:
		t.Fatalf("file_write %q: %v %v", a.Path, err, serr)
	case string(got) != a.Content || r.Bytes != len(a.Content):
		t.Fatalf("file_write %q of %q left %q, reported %d bytes", a.Path, a.Content, got, r.Bytes)
	case int64(len(a.Content)) > clamp(a.MaxBytes, child.DefaultWriteMax, child.HardWriteMax):
		t.Fatalf("file_write %q wrote %d bytes over the cap of %d", a.Path, len(a.Content), a.MaxBytes)
	case !fi.Mode().IsRegular() || a.Mode != 0 && fi.Mode().Perm() != fs.FileMode(a.Mode)&fs.ModePerm:
		t.Fatalf("file_write %q with mode %o left %v", a.Path, a.Mode, fi.Mode())
	}
}

func checkEditFile(t *testing.T, before map[string]string, root string, a child.EditFileArgs, out any) {
	t.Helper()
	r := out.(*child.EditFileResult)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	realPath, err := filepath.EvalSymlinks(a.Path)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(realRoot, realPath)
	old, ok := toolTree[rel]
	if !ok || strings.HasPrefix(old, "-> ") {
		t.Fatalf("edit_file %q edited what is not a file of the tree (%q)", a.Path, before[rel])
	}
	got, err := os.ReadFile(a.Path)
	switch {
	case err != nil:
		t.Fatal(err)
	case strings.Count(old, a.Old) != 1:
		t.Fatalf("edit_file %q replaced %q, which occurs %d times", a.Path, a.Old, strings.Count(old, a.Old))
	case string(got) != strings.Replace(old, a.Old, a.New, 1) || r.Replacements != 1 || r.Bytes != len(got):
		t.Fatalf("edit_file %q of %q into %q left %q, reported %+v", a.Path, a.Old, a.New, got, r)
	}
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
		{name: "secret by name", spec: Spec{Argv: []string{"ls"}, Secrets: []string{"MCP_TOKEN=t0ken"}}, ok: true},
		{name: "secret without value", spec: Spec{Argv: []string{"ls"}, Secrets: []string{"MCP_TOKEN"}}},
		{name: "fine env", spec: Spec{Argv: []string{"ls"}, Env: []string{"GOFLAGS=-mod=mod", "LANG"}}, ok: true},
		{name: "egress", spec: Spec{Argv: []string{"ls"}, Net: Net{Egress: &Egress{Hosts: []string{"example.com:443", "[2001:db8::1]:80"}, AllowPrivate: []string{"10.0.0.0/8"}}}}, ok: true},
		{name: "egress and ports", spec: Spec{Argv: []string{"ls"}, Net: Net{Ports: []uint16{443}, Egress: &Egress{Hosts: []string{"example.com:443"}}}}},
		{name: "egress without hosts", spec: Spec{Argv: []string{"ls"}, Net: Net{Egress: &Egress{}}}},
		{name: "egress host without port", spec: Spec{Argv: []string{"ls"}, Net: Net{Egress: &Egress{Hosts: []string{"example.com"}}}}},
		{name: "egress pattern host", spec: Spec{Argv: []string{"ls"}, Net: Net{Egress: &Egress{Hosts: []string{"*.example.com:443"}}}}},
		{name: "egress open prefix", spec: Spec{Argv: []string{"ls"}, Net: Net{Egress: &Egress{Hosts: []string{"example.com:443"}, AllowPrivate: []string{"0.0.0.0/0"}}}}},
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
