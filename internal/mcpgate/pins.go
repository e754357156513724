package mcpgate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/clawsec/claw/internal/atomicfile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPinsBytes bounds the pins file.
const maxPinsBytes = 8 << 20

// Definition is what is pinned of a tool: what the model reads.
type Definition struct {
	Digest      string          `json:"digest"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Seen        time.Time       `json:"seen"`
}

// Pin is a tool's approved definition and, when the upstream changed it,
// the pending one that waits for approval.
type Pin struct {
	Definition
	Pending *Definition `json:"pending,omitempty"`
}

type pinFile struct {
	Version int                       `json:"version"`
	Servers map[string]map[string]Pin `json:"servers"`
}

// Pins is the pins file. It is safe for concurrent use; every change is
// written at once (temporary file, fsync, rename), and the file is read
// again before each change so that two processes do not lose each other's
// pins.
type Pins struct {
	path string
	mu   sync.Mutex
	f    pinFile
}

// ErrChanged means a tool's definition differs from its pin.
var ErrChanged = errors.New("tool definition changed since it was pinned")

// OpenPins reads the pins file at path; a missing file is empty.
func OpenPins(path string) (*Pins, error) {
	p := &Pins{path: path}
	if err := p.load(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Pins) load() error {
	f, err := os.Open(p.path)
	if errors.Is(err, os.ErrNotExist) {
		p.f = pinFile{Version: 1, Servers: map[string]map[string]Pin{}}
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to read pins: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPinsBytes+1))
	if err != nil {
		return fmt.Errorf("failed to read pins: %w", err)
	}
	pf, err := decodePins(data)
	if err != nil {
		return fmt.Errorf("%s: %w", p.path, err)
	}
	p.f = pf
	return nil
}

// decodePins decodes a pins file strictly.
func decodePins(data []byte) (pinFile, error) {
	var pf pinFile
	if len(data) > maxPinsBytes {
		return pf, fmt.Errorf("pins file larger than %d bytes", maxPinsBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pf); err != nil {
		return pinFile{}, fmt.Errorf("malformed pins file: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return pinFile{}, errors.New("malformed pins file: trailing data")
	}
	if pf.Version != 1 {
		return pinFile{}, fmt.Errorf("pins file version %d is not supported", pf.Version)
	}
	if pf.Servers == nil {
		pf.Servers = map[string]map[string]Pin{}
	}
	return pf, nil
}

func (p *Pins) save() error {
	data, err := json.MarshalIndent(p.f, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(p.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("failed to write pins: %w", err)
	}
	return nil
}

// DefinitionOf returns the pinnable definition of t, with its digest over
// the title, the description and the input schema in canonical JSON.
func DefinitionOf(t *mcp.Tool) (Definition, error) {
	schema, err := canonicalJSON(t.InputSchema)
	if err != nil {
		return Definition{}, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	body, err := json.Marshal(struct {
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}{t.Title, t.Description, schema})
	if err != nil {
		return Definition{}, err
	}
	sum := sha256.Sum256(body)
	return Definition{
		Digest:      "sha256:" + hex.EncodeToString(sum[:]),
		Title:       t.Title,
		Description: t.Description,
		InputSchema: schema,
	}, nil
}

// canonicalJSON re-encodes v with sorted object keys.
func canonicalJSON(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var x any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// Check compares t with its pin. A tool seen for the first time is pinned
// (first is true). A tool whose definition differs gets the new definition
// recorded as pending, and Check returns ErrChanged.
func (p *Pins) Check(server string, t *mcp.Tool) (first bool, err error) {
	def, err := DefinitionOf(t)
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return false, err
	}
	tools := p.f.Servers[server]
	pin, ok := tools[t.Name]
	now := time.Now().UTC().Truncate(time.Second)
	switch {
	case !ok:
		def.Seen = now
		if tools == nil {
			tools = map[string]Pin{}
			p.f.Servers[server] = tools
		}
		tools[t.Name] = Pin{Definition: def}
		return true, p.save()
	case pin.Digest == def.Digest:
		if pin.Pending != nil { // changed, then changed back
			pin.Pending = nil
			tools[t.Name] = pin
			return false, p.save()
		}
		return false, nil
	}
	if pin.Pending == nil || pin.Pending.Digest != def.Digest {
		def.Seen = now
		pin.Pending = &def
		tools[t.Name] = pin
		if err := p.save(); err != nil {
			return false, err
		}
	}
	return false, ErrChanged
}

// Get returns the pin of server's tool.
func (p *Pins) Get(server, tool string) (Pin, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return Pin{}, false, err
	}
	pin, ok := p.f.Servers[server][tool]
	return pin, ok, nil
}

// Tools returns the names of server's pinned tools, sorted.
func (p *Pins) Tools(server string) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return nil, err
	}
	var out []string
	for name := range p.f.Servers[server] {
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

// Changed returns "server tool" for every tool whose definition changed
// and waits for approval, sorted.
func (p *Pins) Changed() ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return nil, err
	}
	var out []string
	for server, tools := range p.f.Servers {
		for name, pin := range tools {
			if pin.Pending != nil {
				out = append(out, server+" "+name)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// ErrNothingPending means Approve found no pending definition.
var ErrNothingPending = errors.New("no changed definition is waiting for approval")

// Approve makes the pending definition of server's tool the pinned one,
// if its digest is still want (the digest shown to the user). It returns
// the previous and the new definition.
func (p *Pins) Approve(server, tool, want string) (old, now Definition, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return old, now, err
	}
	pin, ok := p.f.Servers[server][tool]
	if !ok {
		return old, now, fmt.Errorf("no pin for %s %s", server, tool)
	}
	if pin.Pending == nil {
		return old, now, ErrNothingPending
	}
	if want != "" && pin.Pending.Digest != want {
		return old, now, fmt.Errorf("the pending definition changed again (now %s)", pin.Pending.Digest)
	}
	old, now = pin.Definition, *pin.Pending
	p.f.Servers[server][tool] = Pin{Definition: now}
	return old, now, p.save()
}
