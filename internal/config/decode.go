package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// pos is a 1-based line and byte column.
type pos struct{ line, col int }

// source is a parsed document with the position of every key and value,
// keyed by display path ("security.forbidden_paths[2]").
type source struct {
	name  string
	data  []byte
	tree  map[string]any
	keys  map[string]pos
	vals  map[string]pos
	lines []int // offsets at which lines start
	errs  Errors
	warns []*Error // deprecated keys, accepted and ignored
}

// deprecatedKeys are keys claw once documented and no longer reads, with
// what to do about them: a file that has one still loads, with a warning,
// whatever its value.
var deprecatedKeys = map[string]string{
	"security.audit_log": "deprecated and ignored: every decision and outcome is always recorded in the receipt log; remove the key",
}

// parseSource checks the syntax (one error is enough) and indexes positions.
func parseSource(data []byte, name string) (*source, error) {
	s := &source{name: name, data: data, keys: map[string]pos{}, vals: map[string]pos{}}
	s.lines = append(s.lines, 0)
	for i, b := range data {
		if b == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		p := s.at(off)
		return nil, &Errors{List: []*Error{{File: name, Line: p.line, Col: p.col, Msg: "file is not valid UTF-8"}}}
	}
	if err := toml.Unmarshal(data, &s.tree); err != nil {
		e := &Error{File: name, Line: 1, Col: 1, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			e.Line, e.Col = de.Position()
			e.Line, e.Col = max(e.Line, 1), max(e.Col, 1)
		}
		e.Msg = "syntax error: " + scrub(e.Msg)
		return nil, &Errors{List: []*Error{e}}
	}
	s.index()
	return s, nil
}

// at converts a byte offset to a position.
func (s *source) at(off int) pos {
	i := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	i = max(i, 0)
	return pos{line: i + 1, col: off - s.lines[i] + 1}
}

// index walks the AST and records where each key and value starts. The
// first occurrence of a path wins.
func (s *source) index() {
	var p unstable.Parser
	p.Reset(s.data)
	var table string
	arrays := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			table = s.keyPath("", e.Key())
		case unstable.ArrayTable:
			base := s.keyPath("", e.Key())
			table = fmt.Sprintf("%s[%d]", base, arrays[base])
			arrays[base]++
			// each element is where its own [[header]] is written
			at := s.keys[base]
			for it := e.Key(); it.Next(); {
				at = s.at(int(it.Node().Raw.Offset))
			}
			s.recordKey(table, at)
		case unstable.KeyValue:
			s.keyValue(table, e, 0)
		}
	}
}

// keyPath records the position of every prefix of a dotted key and returns
// the full path.
func (s *source) keyPath(prefix string, it unstable.Iterator) string {
	path := prefix
	for it.Next() {
		k := it.Node()
		path = joinKey(path, string(k.Data))
		s.recordKey(path, s.at(int(k.Raw.Offset)))
	}
	return path
}

func (s *source) recordKey(path string, p pos) {
	if _, ok := s.keys[path]; !ok && p.line > 0 {
		s.keys[path] = p
	}
}

func (s *source) recordVal(path string, p pos) {
	if _, ok := s.vals[path]; !ok && p.line > 0 {
		s.vals[path] = p
	}
}

func (s *source) keyValue(table string, kv *unstable.Node, depth int) {
	it := kv.Key()
	path := table
	var last *unstable.Node
	for it.Next() {
		last = it.Node()
		path = joinKey(path, string(last.Data))
		s.recordKey(path, s.at(int(last.Raw.Offset)))
	}
	// The value starts after the '=' that follows the last key part.
	off := -1
	if last != nil {
		off = int(last.Raw.Offset + last.Raw.Length)
		for off < len(s.data) && s.data[off] != '=' {
			off++
		}
		off++
		for off < len(s.data) && (s.data[off] == ' ' || s.data[off] == '\t') {
			off++
		}
	}
	s.value(path, kv.Value(), off, depth)
}

// maxIndexDepth bounds how deep index records nested arrays and inline
// tables; no key of Config is deeper, and deeper values are reported at
// their outer value.
const maxIndexDepth = 8

// value records the position of a value at off (or, when off < 0, at the
// node's own range) and of its elements.
func (s *source) value(path string, v *unstable.Node, off, depth int) {
	if depth > maxIndexDepth {
		return
	}
	if off < 0 && v.Raw.Length > 0 {
		off = int(v.Raw.Offset)
	}
	if off >= 0 && off <= len(s.data) {
		s.recordVal(path, s.at(off))
	}
	switch v.Kind {
	case unstable.Array:
		i := 0
		for it := v.Children(); it.Next(); {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			s.value(fmt.Sprintf("%s[%d]", path, i), c, -1, depth+1)
			i++
		}
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			if c := it.Node(); c.Kind == unstable.KeyValue && depth < maxIndexDepth {
				s.keyValue(path, c, depth+1)
			}
		}
	}
}

// joinKey appends one key part to a display path, quoting parts that are
// not bare keys.
func joinKey(path, part string) string {
	if !isBareKey(part) {
		part = strconv.Quote(part)
	}
	if path == "" {
		return part
	}
	return path + "." + part
}

func isBareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// keyPos is where the key at path is written, falling back to its parents.
func (s *source) keyPos(path string) pos {
	for p := path; p != ""; p = parentPath(p) {
		if q, ok := s.keys[p]; ok {
			return q
		}
		if q, ok := s.vals[p]; ok {
			return q
		}
	}
	return pos{1, 1}
}

// valPos is where the value at path starts, falling back to its key and
// its parents.
func (s *source) valPos(path string) pos {
	for p := path; p != ""; p = parentPath(p) {
		if q, ok := s.vals[p]; ok {
			return q
		}
		if q, ok := s.keys[p]; ok {
			return q
		}
	}
	return pos{1, 1}
}

// parentPath drops the last part ("a.b[1]" → "a.b", "a.b" → "a").
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i > 0 {
			return p[:i]
		}
	}
	// The last '.' outside quotes separates the last part.
	inQuote, cut := false, -1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if inQuote {
				i++
			}
		case '"':
			inQuote = !inQuote
		case '.':
			if !inQuote {
				cut = i
			}
		}
	}
	if cut < 0 {
		return ""
	}
	return p[:cut]
}

// errAtVal reports a problem at the value of path.
func (s *source) errAtVal(path, format string, args ...any) {
	p := s.valPos(path)
	s.errs.List = append(s.errs.List, &Error{File: s.name, Line: p.line, Col: p.col, Key: path, Msg: fmt.Sprintf(format, args...)})
}

var durationType = reflect.TypeFor[Duration]()

// decode copies every key of the tree into c over the defaults, reporting
// unknown keys and wrong types.
func (s *source) decode(c *Config) {
	s.decodeTable("", s.tree, reflect.ValueOf(c).Elem())
}

func (s *source) decodeTable(path string, m map[string]any, rv reflect.Value) {
	fields := tomlFields(rv.Type())
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := joinKey(path, k)
		i, ok := fields[k]
		if why, old := deprecatedKeys[p]; !ok && old {
			q := s.keyPos(p)
			s.warns = append(s.warns, &Error{File: s.name, Line: q.line, Col: q.col, Key: p, Msg: why})
			continue
		}
		if !ok {
			q := s.keyPos(p)
			if looksSecret(k) {
				p = joinKey(path, "(hidden)")
			}
			s.errs.List = append(s.errs.List, &Error{File: s.name, Line: q.line, Col: q.col, Key: p,
				Msg: "unknown key" + suggest(path, k)})
			continue
		}
		s.decodeValue(p, m[k], rv.Field(i))
	}
}

// tomlFields maps the toml tag of each field of a struct type to its index.
func tomlFields(t reflect.Type) map[string]int {
	f := map[string]int{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		if tag == "" || tag == "-" || !sf.IsExported() {
			continue
		}
		f[tag] = i
	}
	return f
}

func (s *source) decodeValue(path string, v any, fv reflect.Value) {
	t := fv.Type()
	if t == durationType {
		str, ok := v.(string)
		if !ok {
			s.errAtVal(path, "expected a duration string like \"250ms\" or \"15s\", got %s", typeName(v))
			return
		}
		d, err := time.ParseDuration(str)
		if err != nil {
			s.errAtVal(path, "invalid duration %s: use a number with a unit, like \"250ms\" or \"15s\"", show(path, str))
			return
		}
		fv.Set(reflect.ValueOf(Duration{d}))
		return
	}
	switch t.Kind() {
	case reflect.String:
		str, ok := v.(string)
		if !ok {
			s.errAtVal(path, "expected a string, got %s", typeName(v))
			return
		}
		fv.SetString(str)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			s.errAtVal(path, "expected a boolean (true or false), got %s", typeName(v))
			return
		}
		fv.SetBool(b)
	case reflect.Int:
		n, ok := v.(int64)
		if !ok {
			s.errAtVal(path, "expected an integer, got %s", typeName(v))
			return
		}
		if n < math.MinInt32 || n > math.MaxInt32 {
			s.errAtVal(path, "integer %d is out of range", n)
			return
		}
		fv.SetInt(n)
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			s.errAtVal(path, "expected an array, got %s", typeName(v))
			return
		}
		out := reflect.MakeSlice(t, 0, len(arr))
		for i, e := range arr {
			ev := reflect.New(t.Elem()).Elem()
			before := len(s.errs.List)
			s.decodeValue(fmt.Sprintf("%s[%d]", path, i), e, ev)
			if len(s.errs.List) == before {
				out = reflect.Append(out, ev)
			}
		}
		fv.Set(out)
	case reflect.Struct:
		tbl, ok := v.(map[string]any)
		if !ok {
			s.errAtVal(path, "expected a table, got %s", typeName(v))
			return
		}
		s.decodeTable(path, tbl, fv)
	case reflect.Map:
		// A table of named entries ([providers.NAME], headers, routes).
		// Entries replace the defaults of the same name whole.
		tbl, ok := v.(map[string]any)
		if !ok {
			s.errAtVal(path, "expected a table, got %s", typeName(v))
			return
		}
		out := reflect.MakeMapWithSize(t, fv.Len()+len(tbl))
		iter := fv.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
		keys := make([]string, 0, len(tbl))
		for k := range tbl {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ev := reflect.New(t.Elem()).Elem()
			before := len(s.errs.List)
			s.decodeValue(joinKey(path, k), tbl[k], ev)
			if len(s.errs.List) == before {
				out.SetMapIndex(reflect.ValueOf(k), ev)
			}
		}
		fv.Set(out)
	default:
		// Every field type of Config is handled above.
		panic(fmt.Sprintf("config: bug: field %s has unsupported type %s", path, t))
	}
}

// typeName names the TOML type of a decoded value, with its article.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "a date or time"
	}
	return fmt.Sprintf("%T", v)
}

// knownKeys lists every key path of Config (built on first use).
var knownKeys = sync.OnceValue(func() []string {
	var out []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		names := make([]string, 0)
		for name := range tomlFields(t) {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := joinKey(prefix, name)
			out = append(out, p)
			ft := t.Field(tomlFields(t)[name]).Type
			if ft.Kind() == reflect.Struct && ft != durationType {
				walk(p, ft)
			}
		}
	}
	walk("", reflect.TypeFor[Config]())
	return out
})

// suggest returns ` (did you mean "x"?)` for the known key closest to an
// unknown key k in the table at path, or "".
func suggest(table, k string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	best, bestD := "", math.MaxInt
	for _, known := range knownKeys() {
		parent := parentPath(known)
		leaf := known
		if parent != "" {
			leaf = known[len(parent)+1:]
		}
		d := levenshtein(norm(k), norm(leaf))
		if parent != table {
			// A key that belongs in another table is a good guess only
			// when its name (nearly) matches.
			if d > 1 {
				continue
			}
			d++
		}
		limit := max(2, len(k)/4)
		if d <= limit && d < bestD {
			best, bestD = known, d
		}
	}
	if best == "" {
		return ""
	}
	parent := parentPath(best)
	leaf := strings.TrimPrefix(best[len(parent):], ".")
	switch {
	case parent == table:
		return fmt.Sprintf(" (did you mean %q?)", leaf)
	case parent == "":
		return fmt.Sprintf(" (did you mean %q, at the top level before any [table]?)", leaf)
	default:
		return fmt.Sprintf(" (did you mean %q under [%s]?)", leaf, parent)
	}
}

// levenshtein is the edit distance between a and b, in bytes.
func levenshtein(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return math.MaxInt / 2
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = slices.Min([]int{prev[j] + 1, cur[j-1] + 1, prev[j-1] + cost})
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
