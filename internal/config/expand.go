package config

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Expand expands ~ and $VAR / ${VAR} in the path-like fields (workspace_dir,
// security.forbidden_paths, security.read_paths, receipts.dir,
// receipts.key, agent.soul, agent.memory_db, serve.socket,
// serve.token_file, providers.NAME.script, channels.NAME.dir), then cleans them. getenv supplies variables and $HOME for ~.
// A variable that is unset or empty is an error, and so is a path that
// expands to a relative one; "$$" is a literal "$". Problems are reported
// together as an [*Errors] with the positions of the values. Expand is a
// no-op on a Config that was already expanded.
func (c *Config) Expand(getenv func(string) string) error {
	if c.expanded {
		return nil
	}
	// Work on copies, so that a failed Expand leaves c as it was.
	ws, rdir, rkey := c.WorkspaceDir, c.Receipts.Dir, c.Receipts.Key
	soul, mdb, sock, tok := c.Agent.Soul, c.Agent.MemoryDB, c.Serve.Socket, c.Serve.TokenFile
	provs := make(map[string]Provider, len(c.Providers))
	for k, v := range c.Providers {
		provs[k] = v
	}
	fp := slices.Clone(c.Security.ForbiddenPaths)
	rp := slices.Clone(c.Security.ReadPaths)
	sp := slices.Clone(c.Sandbox.Path)
	errs := &Errors{}
	one := func(path string, v *string, pattern bool) {
		out, err := expandPath(*v, getenv, pattern)
		if err != nil {
			errs.List = append(errs.List, c.errorAt(path, err.Error()))
			return
		}
		*v = out
	}
	many := func(path string, vs []string, pattern bool) {
		for i := range vs {
			one(fmt.Sprintf("%s[%d]", path, i), &vs[i], pattern)
		}
	}
	one("workspace_dir", &ws, false)
	many("security.forbidden_paths", fp, true)
	many("security.read_paths", rp, false)
	many("sandbox.path", sp, false)
	one("receipts.dir", &rdir, false)
	one("receipts.key", &rkey, false)
	one("agent.soul", &soul, false)
	one("agent.memory_db", &mdb, false)
	one("serve.socket", &sock, false)
	one("serve.token_file", &tok, false)
	chans := make(map[string]Channel, len(c.Channels))
	for name, ch := range c.Channels {
		if ch.Dir != "" {
			one(joinKey(joinKey("channels", name), "dir"), &ch.Dir, false)
		}
		chans[name] = ch
	}
	for name, pv := range provs {
		if pv.Script != "" {
			one(joinKey(joinKey("providers", name), "script"), &pv.Script, false)
			provs[name] = pv
		}
	}
	if err := errs.err(); err != nil {
		return err
	}
	c.WorkspaceDir, c.Receipts.Dir, c.Receipts.Key = ws, rdir, rkey
	c.Agent.Soul, c.Agent.MemoryDB, c.Serve.Socket, c.Serve.TokenFile = soul, mdb, sock, tok
	c.Providers = provs
	if c.Channels != nil {
		c.Channels = chans
	}
	c.Security.ForbiddenPaths, c.Security.ReadPaths = fp, rp
	c.Sandbox.Path = sp
	c.expanded = true
	return nil
}

// errorAt builds an Error for the value at path, with its position when the
// value was written in the file.
func (c *Config) errorAt(path, msg string) *Error {
	name := c.Path
	if name == "" {
		name = "(defaults)"
	}
	if c.src != nil {
		if _, ok := c.src.vals[path]; ok {
			p := c.src.valPos(path)
			return &Error{File: name, Line: p.line, Col: p.col, Key: path, Msg: msg}
		}
	}
	return &Error{File: name, Key: path, Msg: msg + " (default value)"}
}

// expandPath expands one path. Its errors never include the values of
// variables.
func expandPath(v string, getenv func(string) string, pattern bool) (string, error) {
	if msg := pathForm(v, pattern); msg != "" {
		return "", errors.New(msg)
	}
	if v == "~" || strings.HasPrefix(v, "~/") {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("uses ~ but $HOME is not set")
		}
		// $HOME is taken literally, not expanded again.
		home = strings.ReplaceAll(home, "$", "$$")
		v = home + v[1:]
	}
	out, err := expandVars(v, getenv)
	if err != nil {
		return "", err
	}
	if strings.ContainsRune(out, 0) {
		return "", errors.New("expands to a path with a NUL byte")
	}
	if pattern && (out == "**" || strings.HasPrefix(out, "**/")) {
		return filepath.Clean(out), nil
	}
	if !filepath.IsAbs(out) {
		return "", errors.New("expands to a relative path; the result must be absolute")
	}
	return filepath.Clean(out), nil
}

// expandVars replaces $NAME and ${NAME}; "$$" is a literal "$".
func expandVars(v string, getenv func(string) string) (string, error) {
	if !strings.Contains(v, "$") {
		return v, nil
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '$' {
			b.WriteByte(v[i])
			continue
		}
		if i+1 >= len(v) {
			return "", errors.New("ends with a lone $ (write $$ for a literal dollar sign)")
		}
		var name string
		switch c := v[i+1]; {
		case c == '$':
			b.WriteByte('$')
			i++
			continue
		case c == '{':
			end := strings.IndexByte(v[i+2:], '}')
			if end < 0 {
				return "", errors.New("has ${ without a closing }")
			}
			name = v[i+2 : i+2+end]
			if !isVarName(name) {
				return "", errors.New("has a ${…} that is not a variable name")
			}
			i += 2 + end
		case isVarStart(c):
			j := i + 1
			for j < len(v) && isVarChar(v[j]) {
				j++
			}
			name = v[i+1 : j]
			i = j - 1
		default:
			return "", errors.New("has a $ that does not start a variable (write $$ for a literal dollar sign)")
		}
		val := getenv(name)
		if val == "" {
			return "", fmt.Errorf("uses $%s, which is not set", name)
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

func isVarStart(c byte) bool { return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
func isVarChar(c byte) bool  { return isVarStart(c) || c >= '0' && c <= '9' }

func isVarName(s string) bool {
	if s == "" || !isVarStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isVarChar(s[i]) {
			return false
		}
	}
	return true
}

// EnvNames lists, sorted and once each, the variables a config document
// names as $NAME or ${NAME} outside whole-line comments, and HOME and
// CLAW_HOME, which every config may use (~, the defaults). It reads the
// text only, without parsing it: a reference spelt with a TOML escape
// (\u0024) or on a line of a multi-line string that starts with # is
// missed, so a caller that relies on the list must check it against the
// variables [Config.Expand] asked for.
func EnvNames(data []byte) []string {
	names := []string{"CLAW_HOME", "HOME"}
	for line := range bytes.Lines(data) {
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '#' {
			continue
		}
		for i := bytes.IndexByte(line, '$'); i >= 0; i = bytes.IndexByte(line, '$') {
			line = line[i+1:]
			if len(line) > 0 && line[0] == '{' {
				line = line[1:]
			}
			j := 0
			for j < len(line) && isVarChar(line[j]) {
				j++
			}
			if j > 0 && isVarStart(line[0]) {
				names = append(names, string(line[:j]))
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
