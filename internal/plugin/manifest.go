// Package plugin installs, pins and resolves external-process plugins.
//
// A plugin is a directory with a manifest.toml and the programs it names:
//
//	name = "echo-plugin"
//	version = "0.1.0"
//	capabilities = ["tool"]
//
//	[reach]          # optional: what its tools may touch besides their own directory
//	read = ["notes"] # relative to the workspace, or absolute, or ~/...
//	write = []
//	hosts = ["api.example.com:443"] # host:port, through the egress proxy
//
//	[[tools]]
//	name = "echo"
//	description = "Echoes input"
//	command = "./echo-plugin"
//	schema = { type = "object" }
//
// [Store.Install] copies it under the plugins directory and pins the
// SHA-256 of the manifest and of every file; [Store.Resolve] recomputes
// them before each call, so a plugin that changed is disabled until it is
// installed again, as MCP tool pins are.
//
// A tool reads its arguments as JSON on stdin and writes its result as
// JSON on stdout. It runs in claw's sandbox like every other action (see
// the broker); this package never runs anything.
package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/pelletier/go-toml/v2"
)

// ManifestFile is the name of a plugin's manifest.
const ManifestFile = "manifest.toml"

// Bounds of a manifest.
const (
	MaxManifestBytes = 64 << 10
	maxTools         = 64
	maxReach         = 64
	maxSchemaBytes   = 16 << 10
	// MaxTimeout bounds a tool's own timeout.
	MaxTimeout = 10 * time.Minute
)

// Manifest is a decoded, validated manifest.toml.
type Manifest struct {
	Name         string   `toml:"name" json:"name"`
	Version      string   `toml:"version" json:"version"`
	Description  string   `toml:"description" json:"description,omitempty"`
	Capabilities []string `toml:"capabilities" json:"capabilities"`
	Reach        Reach    `toml:"reach" json:"reach"`
	Tools        []Tool   `toml:"tools" json:"tools"`
}

// Reach is what a plugin's tools may touch besides their own directory.
type Reach struct {
	Read  []string `toml:"read" json:"read,omitempty"`
	Write []string `toml:"write" json:"write,omitempty"`
	// Hosts are the network destinations its tools connect to, each
	// host:port. The gate judges them like a shell command's destinations
	// (allowed_domains, allow_private_cidrs) and the tool reaches the ones
	// allowed through claw's egress proxy, and nothing else.
	Hosts []string `toml:"hosts" json:"hosts,omitempty"`
}

// Tool is one tool of a plugin.
type Tool struct {
	Name        string         `toml:"name" json:"name"`
	Description string         `toml:"description" json:"description"`
	Command     string         `toml:"command" json:"command"`
	Schema      map[string]any `toml:"schema" json:"schema"`
	// Timeout is a Go duration ("10s"); empty takes the sandbox's.
	Timeout string `toml:"timeout" json:"timeout,omitempty"`
}

// SchemaJSON is the tool's input schema as JSON.
func (t Tool) SchemaJSON() json.RawMessage {
	b, err := json.Marshal(t.Schema)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}

// resolved is the tool's schema, ready to validate arguments; remote
// references are refused (nothing is fetched).
func (t Tool) resolved() (*jsonschema.Resolved, error) {
	var js jsonschema.Schema
	if err := json.Unmarshal(t.SchemaJSON(), &js); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	rs, err := js.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("not a usable JSON Schema: %w", err)
	}
	return rs, nil
}

// ValidateArgs checks a call's arguments against the tool's schema.
func (t Tool) ValidateArgs(args map[string]any) error {
	rs, err := t.resolved()
	if err != nil {
		return err
	}
	if args == nil {
		args = map[string]any{}
	}
	// the instance as JSON decodes it: numbers float64, objects maps
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		return err
	}
	return rs.Validate(inst)
}

// TimeoutDuration is the tool's timeout; 0 when none is set.
func (t Tool) TimeoutDuration() time.Duration {
	d, _ := time.ParseDuration(t.Timeout)
	return d
}

// ManifestError is a problem in a manifest, with where it is.
type ManifestError struct {
	Line, Col int
	Msg       string
}

func (e *ManifestError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", ManifestFile, e.Line, e.Col, e.Msg)
	}
	return ManifestFile + ": " + e.Msg
}

var nameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`) })

// DecodeManifest decodes and validates a manifest strictly: unknown keys,
// wrong types, a bad name or command and a network reach are errors with
// their line and column where the decoder knows them.
func DecodeManifest(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, &ManifestError{Msg: fmt.Sprintf("larger than %d bytes", MaxManifestBytes)}
	}
	if !utf8.Valid(data) {
		return nil, &ManifestError{Msg: "not valid UTF-8"}
	}
	var m Manifest
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, tomlError(err)
	}
	if err := m.validate(); err != nil {
		return nil, &ManifestError{Msg: err.Error()}
	}
	return &m, nil
}

func tomlError(err error) error {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		de := sm.Errors[0]
		line, col := de.Position()
		return &ManifestError{Line: line, Col: col, Msg: fmt.Sprintf("unknown key %q", strings.Join(de.Key(), "."))}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		return &ManifestError{Line: line, Col: col, Msg: strings.TrimPrefix(de.Error(), "toml: ")}
	}
	return &ManifestError{Msg: strings.TrimPrefix(err.Error(), "toml: ")}
}

func (m *Manifest) validate() error {
	if !nameRe().MatchString(m.Name) {
		return fmt.Errorf("name %q: want 1-64 of a-z 0-9 . _ -, starting with a letter or digit", m.Name)
	}
	if m.Version == "" || len(m.Version) > 64 {
		return errors.New("version: want a non-empty version of at most 64 bytes")
	}
	if len(m.Capabilities) != 1 || m.Capabilities[0] != "tool" {
		return fmt.Errorf("capabilities %q: the only capability is [\"tool\"]", m.Capabilities)
	}
	if len(m.Reach.Hosts) > maxReach {
		return fmt.Errorf("reach.hosts: more than %d hosts", maxReach)
	}
	for _, h := range m.Reach.Hosts {
		if err := checkHost(h); err != nil {
			return fmt.Errorf("reach.hosts %q: %w", h, err)
		}
	}
	if len(m.Reach.Read)+len(m.Reach.Write) > maxReach {
		return fmt.Errorf("reach: more than %d paths", maxReach)
	}
	for _, p := range append(append([]string(nil), m.Reach.Read...), m.Reach.Write...) {
		if p == "" || strings.ContainsRune(p, 0) || strings.ContainsAny(p, "*?[") {
			return fmt.Errorf("reach path %q: want a path without NUL or glob characters", p)
		}
	}
	if len(m.Tools) == 0 || len(m.Tools) > maxTools {
		return fmt.Errorf("tools: want 1 to %d [[tools]]", maxTools)
	}
	seen := map[string]bool{}
	for i, t := range m.Tools {
		if !nameRe().MatchString(t.Name) {
			return fmt.Errorf("tools[%d].name %q: want 1-64 of a-z 0-9 . _ -", i, t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tools[%d].name %q: given twice", i, t.Name)
		}
		seen[t.Name] = true
		if _, err := commandPath(t.Command); err != nil {
			return fmt.Errorf("tools[%d].command: %w", i, err)
		}
		if t.Schema == nil {
			return fmt.Errorf("tools[%d].schema: missing (want at least { type = \"object\" })", i)
		}
		if ty, _ := t.Schema["type"].(string); ty != "object" {
			return fmt.Errorf("tools[%d].schema: type must be \"object\"", i)
		}
		if len(t.SchemaJSON()) > maxSchemaBytes {
			return fmt.Errorf("tools[%d].schema: larger than %d bytes", i, maxSchemaBytes)
		}
		if _, err := t.resolved(); err != nil {
			return fmt.Errorf("tools[%d].schema: %w", i, err)
		}
		if t.Timeout != "" {
			d, err := time.ParseDuration(t.Timeout)
			if err != nil || d <= 0 || d > MaxTimeout {
				return fmt.Errorf("tools[%d].timeout %q: want a duration from 1ms to %s", i, t.Timeout, MaxTimeout)
			}
		}
	}
	return nil
}

// commandPath is a tool's command as a clean path inside the plugin
// directory: "./echo-plugin" or "bin/run", never absolute or above it.
func commandPath(c string) (string, error) {
	if c == "" || strings.ContainsRune(c, 0) || strings.ContainsAny(c, " \t\n\\") {
		return "", fmt.Errorf("%q: want a program inside the plugin directory, such as \"./run\"", c)
	}
	p := path.Clean(c)
	if path.IsAbs(p) || p == "." || p == ".." || strings.HasPrefix(p, "../") || p == ManifestFile {
		return "", fmt.Errorf("%q: want a program inside the plugin directory, such as \"./run\"", c)
	}
	return p, nil
}

// checkHost accepts host:port ([v6]:port for an IPv6 address) with a
// port of 1-65535; the gate canonicalises and judges the host.
func checkHost(h string) error {
	host, port, err := net.SplitHostPort(h)
	if err != nil || host == "" || strings.ContainsAny(host, "/@?#*$` \t") {
		return errors.New("want host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return errors.New("want a port of 1 to 65535")
	}
	return nil
}
