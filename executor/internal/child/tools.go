package child

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/clawsec/claw/internal/atomicfile"
	"github.com/clawsec/claw/internal/toolkind"
)

// Tool names.
const (
	ToolFileRead  = toolkind.FileRead
	ToolFileWrite = toolkind.FileWrite
	ToolEditFile  = toolkind.EditFile
	ToolFileList  = toolkind.FileList
	ToolHTTP      = toolkind.HTTP
)

// Limits of the tools.
const (
	MaxToolArgs      = 16 << 20 // bytes of JSON arguments read from stdin
	DefaultReadMax   = 1 << 20
	HardReadMax      = 8 << 20
	DefaultWriteMax  = 1 << 20
	HardWriteMax     = 8 << 20
	DefaultListDepth = 3
	MaxListDepth     = 16
	DefaultListMax   = 1000
	HardListMax      = 20000
)

// ToolOutput is what a tool writes on stdout: the payload or the error.
type ToolOutput struct {
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// ToolMain runs one in-sandbox tool (argv[1] == EntryTool, args[0] the
// tool's name) with its JSON arguments on stdin, and writes a ToolOutput on
// stdout. It exits 0 when the tool succeeded, 1 when it reported an error.
func ToolMain(args []string) int {
	if len(args) != 1 {
		return writeTool(nil, errors.New("usage: "+EntryTool+" NAME"))
	}
	in, err := io.ReadAll(io.LimitReader(os.Stdin, MaxToolArgs+1))
	if err != nil {
		return writeTool(nil, fmt.Errorf("failed to read arguments: %w", err))
	}
	if len(in) > MaxToolArgs {
		return writeTool(nil, errors.New("arguments too large"))
	}
	out, err := RunTool(args[0], in)
	return writeTool(out, err)
}

func writeTool(payload any, err error) int {
	var o ToolOutput
	code := 0
	if err != nil {
		o.Error = err.Error()
		code = 1
	} else {
		b, merr := json.Marshal(payload)
		if merr != nil {
			o.Error = merr.Error()
			code = 1
		} else {
			o.Payload = b
		}
	}
	b, _ := json.Marshal(o)
	os.Stdout.Write(append(b, '\n'))
	return code
}

// RunTool runs the named tool on its JSON arguments in this process. It is
// meant to be called inside the sandbox.
func RunTool(name string, args []byte) (any, error) {
	switch toolkind.Kind(name) {
	case ToolFileRead:
		var a FileReadArgs
		if err := StrictJSON(args, &a); err != nil {
			return nil, err
		}
		return FileRead(a)
	case ToolFileWrite:
		var a FileWriteArgs
		if err := StrictJSON(args, &a); err != nil {
			return nil, err
		}
		return FileWrite(a)
	case ToolEditFile:
		var a EditFileArgs
		if err := StrictJSON(args, &a); err != nil {
			return nil, err
		}
		return EditFile(a)
	case ToolFileList:
		var a FileListArgs
		if err := StrictJSON(args, &a); err != nil {
			return nil, err
		}
		return FileList(a)
	}
	if f, ok := extraTools[toolkind.Kind(name)]; ok {
		return f(args)
	}
	return nil, fmt.Errorf("tool %q is not available in this program", name)
}

var extraTools = map[toolkind.Kind]func(args []byte) (any, error){}

// RegisterTool adds a tool implemented in another package (in an init
// function), so that only programs importing it carry its dependencies.
func RegisterTool(name toolkind.Kind, f func(args []byte) (any, error)) { extraTools[name] = f }

// StrictJSON decodes exactly one JSON value with no unknown fields.
func StrictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed arguments: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("malformed arguments: trailing data")
	}
	return nil
}

// warmRequest and warmArgs are what WarmJSON decodes: a request and
// arguments every built-in tool accepts (its path alone).
var (
	warmRequest = []byte(`{"argv":["x"],"env":["A=b"],"dir":"/"}`)
	warmArgs    = []byte(`{"path":"/"}`)
)

// WarmJSON builds encoding/json's caches for the types an armed worker
// decodes and encodes once its request comes (the request; with tools,
// the built-in tools' arguments, results and output), while it waits
// for it. A new process builds them on first use, about a tenth of a
// millisecond on the action's path. Nothing is read or written.
func WarmJSON(tools bool) {
	ParseRequest(warmRequest)
	if !tools {
		return
	}
	for _, a := range []any{&FileReadArgs{}, &FileWriteArgs{}, &EditFileArgs{}, &FileListArgs{}} {
		StrictJSON(warmArgs, a)
	}
	for _, r := range []any{&FileReadResult{}, &FileWriteResult{}, &EditFileResult{}, &FileListResult{Entries: []Entry{{}}}} {
		if b, err := json.Marshal(r); err == nil {
			json.Marshal(ToolOutput{Payload: b})
		}
	}
}

func checkPath(p string) error {
	if p == "" {
		return errors.New("path is empty")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return errors.New("path contains a NUL byte")
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("path %q is not absolute", p)
	}
	return nil
}

// FileReadArgs are file_read's arguments.
type FileReadArgs struct {
	Path     string `json:"path"`
	MaxBytes int64  `json:"max_bytes,omitempty"`
}

// FileReadResult is file_read's payload.
type FileReadResult struct {
	Content   string `json:"content"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated,omitempty"`
}

// FileRead reads a UTF-8 text file, at most MaxBytes of it.
func FileRead(a FileReadArgs) (*FileReadResult, error) {
	if err := checkPath(a.Path); err != nil {
		return nil, err
	}
	max := clampSize(a.MaxBytes, DefaultReadMax, HardReadMax)
	f, err := os.Open(a.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", a.Path)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	r := &FileReadResult{Size: fi.Size()}
	if int64(len(data)) > max {
		data, r.Truncated = TrimPartialRune(data[:max]), true // do not cut a rune in half
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: binary file (not UTF-8 text)", a.Path)
	}
	r.Content = string(data)
	return r, nil
}

// TrimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func TrimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

func clampSize(v, def, hard int64) int64 {
	if v <= 0 {
		return def
	}
	return min(v, hard)
}

// FileWriteArgs are file_write's arguments.
type FileWriteArgs struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Mode     uint32 `json:"mode,omitempty"` // default 0644, or the existing file's
	MaxBytes int64  `json:"max_bytes,omitempty"`
}

// FileWriteResult is file_write's payload.
type FileWriteResult struct {
	Bytes int `json:"bytes"`
}

// FileWrite replaces (or creates) a file atomically: a temporary file in
// the same directory, synced, then renamed over the target.
func FileWrite(a FileWriteArgs) (*FileWriteResult, error) {
	if err := checkPath(a.Path); err != nil {
		return nil, err
	}
	if max := clampSize(a.MaxBytes, DefaultWriteMax, HardWriteMax); int64(len(a.Content)) > max {
		return nil, fmt.Errorf("content is %d bytes, more than the limit of %d", len(a.Content), max)
	}
	mode := fs.FileMode(0o644)
	if a.Mode != 0 {
		mode = fs.FileMode(a.Mode) & fs.ModePerm
	} else if fi, err := os.Stat(a.Path); err == nil {
		mode = fi.Mode() & fs.ModePerm
	}
	if err := atomicWrite(a.Path, []byte(a.Content), mode); err != nil {
		return nil, err
	}
	return &FileWriteResult{Bytes: len(a.Content)}, nil
}

func atomicWrite(path string, data []byte, mode fs.FileMode) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	return atomicfile.WriteFile(path, data, mode)
}

// EditFileArgs are edit_file's arguments.
type EditFileArgs struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// EditFileResult is edit_file's payload.
type EditFileResult struct {
	Replacements int `json:"replacements"`
	Bytes        int `json:"bytes"`
}

// EditFile replaces the one exact occurrence of Old with New.
func EditFile(a EditFileArgs) (*EditFileResult, error) {
	if err := checkPath(a.Path); err != nil {
		return nil, err
	}
	if a.Old == "" {
		return nil, errors.New("old text is empty")
	}
	r, err := FileRead(FileReadArgs{Path: a.Path, MaxBytes: HardWriteMax})
	if err != nil {
		return nil, err
	}
	if r.Truncated {
		return nil, fmt.Errorf("%s: larger than %d bytes", a.Path, HardWriteMax)
	}
	switch n := strings.Count(r.Content, a.Old); n {
	case 0:
		return nil, fmt.Errorf("%s: old text not found", a.Path)
	case 1:
	default:
		return nil, fmt.Errorf("%s: old text occurs %d times; it must be unique", a.Path, n)
	}
	out := strings.Replace(r.Content, a.Old, a.New, 1)
	if len(out) > HardWriteMax {
		return nil, fmt.Errorf("%s: result larger than %d bytes", a.Path, HardWriteMax)
	}
	fi, err := os.Stat(a.Path)
	if err != nil {
		return nil, err
	}
	if err := atomicWrite(a.Path, []byte(out), fi.Mode()&fs.ModePerm); err != nil {
		return nil, err
	}
	return &EditFileResult{Replacements: 1, Bytes: len(out)}, nil
}

// FileListArgs are file_list's arguments.
type FileListArgs struct {
	Path       string `json:"path"`
	Depth      int    `json:"depth,omitempty"`
	MaxEntries int    `json:"max_entries,omitempty"`
}

// Entry is one file_list entry; Path is relative to the listed directory.
type Entry struct {
	Path string `json:"path"`
	Type string `json:"type"` // file, dir, symlink, other
	Size int64  `json:"size,omitempty"`
}

// FileListResult is file_list's payload.
type FileListResult struct {
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated,omitempty"`
}

// FileList lists a directory recursively, breadth by path order, to Depth
// levels and at most MaxEntries entries. Symlinks are listed, not followed.
func FileList(a FileListArgs) (*FileListResult, error) {
	if err := checkPath(a.Path); err != nil {
		return nil, err
	}
	depth := a.Depth
	if depth <= 0 {
		depth = DefaultListDepth
	}
	depth = min(depth, MaxListDepth)
	max := int(clampSize(int64(a.MaxEntries), DefaultListMax, HardListMax))
	root := filepath.Clean(a.Path)
	res := &FileListResult{Entries: []Entry{}}
	errStop := errors.New("stop")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p == root {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return fmt.Errorf("%s: not a directory", root)
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		level := strings.Count(rel, string(filepath.Separator)) + 1
		if len(res.Entries) >= max {
			res.Truncated = true
			return errStop
		}
		e := Entry{Path: rel, Type: "other"}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			e.Type = "symlink"
		case d.IsDir():
			e.Type = "dir"
		case d.Type().IsRegular():
			e.Type = "file"
			if fi, ierr := d.Info(); ierr == nil {
				e.Size = fi.Size()
			}
		}
		res.Entries = append(res.Entries, e)
		if err != nil && d.IsDir() {
			return fs.SkipDir // unreadable directory: listed, not entered
		}
		if d.IsDir() && level >= depth {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil && err != errStop {
		return nil, err
	}
	sort.SliceStable(res.Entries, func(i, j int) bool { return res.Entries[i].Path < res.Entries[j].Path })
	return res, nil
}
