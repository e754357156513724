package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/mcpgate"
	"github.com/clawsec/claw/internal/textesc"
)

// MCPPinsFile is the file of the claw home where claw mcp proxy pins the
// definitions of the tools it offers.
const MCPPinsFile = "mcp-pins.json"

// MCPPinsPath is the pins file of the claw home.
func MCPPinsPath(home string) string { return filepath.Join(home, MCPPinsFile) }

// MCPServerName is the server name claw mcp proxy uses for name, or when
// it is empty for the base name of the command cmd: made valid; a name
// given with --name (given) must be valid already.
func MCPServerName(name, cmd string, given bool) (string, error) {
	if name == "" {
		name = filepath.Base(cmd)
	}
	server := mcpgate.SanitizeName(name)
	if server != name && given {
		return "", Usagef("--name %q: use lowercase letters, digits, '-' and '_' (e.g. %q)", name, server)
	}
	return server, nil
}

// CheckMCPPins checks the pins file of the claw home: private, readable,
// and no tool disabled by a changed definition. It is skipped when the
// home could not be found (homeErr).
func CheckMCPPins(home string, homeErr error) DoctorResult {
	if homeErr != nil {
		return DoctorSkipped(homeErr.Error())
	}
	path := MCPPinsPath(home)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return DoctorSkipped("no MCP server proxied yet")
	}
	if err != nil {
		return DoctorResult{Detail: err.Error()}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return DoctorResult{Detail: fmt.Sprintf("%s has mode %04o", path, fi.Mode().Perm()), Fix: "chmod 600 " + path}
	}
	pins, err := mcpgate.OpenPins(path)
	if err != nil {
		return DoctorResult{Detail: err.Error(), Fix: "fix or remove " + path + " (every tool is then pinned again at first sight)"}
	}
	changed, err := pins.Changed()
	if err != nil {
		return DoctorResult{Detail: err.Error()}
	}
	if len(changed) > 0 {
		return DoctorResult{Detail: fmt.Sprintf("%d proxied tools are disabled because their definitions changed: %s", len(changed), strings.Join(changed, ", ")),
			Fix: "review each with 'claw mcp pin " + changed[0] + "'"}
	}
	return DoctorResult{OK: true, Detail: path}
}

// PinRow is one pinned tool of a server as claw mcp pin lists it.
type PinRow struct {
	Tool    string `json:"tool"`
	Digest  string `json:"digest"`
	Changed bool   `json:"changed"`
	Pending string `json:"pending,omitempty"`
}

// MCPPinRows lists the pinned tools of server in the pins file path.
func MCPPinRows(path, server string) ([]PinRow, error) {
	pins, err := mcpgate.OpenPins(path)
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	names, err := pins.Tools(server)
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	rows := []PinRow{}
	for _, n := range names {
		p, _, err := pins.Get(server, n)
		if err != nil {
			return nil, WithCode(ExitError, err)
		}
		r := PinRow{Tool: n, Digest: p.Digest}
		if p.Pending != nil {
			r.Changed, r.Pending = true, p.Pending.Digest
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// PinChange is how a pinned tool's definition changed: the digests of
// the pinned and the new definition, when the new one was seen, and a
// line diff of the two (each line "  ", "- " or "+ " and the text).
type PinChange struct {
	Old, New string
	Seen     time.Time
	Diff     []string
}

// MCPPinChange is the change of tool of server in the pins file path; a
// tool without a pin, or whose definition has not changed, is an error.
func MCPPinChange(path, server, tool string) (PinChange, error) {
	pins, err := mcpgate.OpenPins(path)
	if err != nil {
		return PinChange{}, WithCode(ExitError, err)
	}
	pin, ok, err := pins.Get(server, tool)
	if err != nil {
		return PinChange{}, WithCode(ExitError, err)
	}
	if !ok {
		return PinChange{}, WithCode(ExitError, fmt.Errorf("no pin for %s %s", server, tool), "see the pinned tools with 'claw mcp pin "+server+"'")
	}
	if pin.Pending == nil {
		return PinChange{}, WithCode(ExitError, fmt.Errorf("%s %s has not changed since it was pinned (%s)", server, tool, pin.Digest))
	}
	return PinChange{Old: pin.Digest, New: pin.Pending.Digest, Seen: pin.Pending.Seen,
		Diff: lineDiff(definitionLines(pin.Definition), definitionLines(*pin.Pending))}, nil
}

// ApproveMCPPin pins the new definition of tool of server, the one with
// digest want, and returns the digests of the old and the new pin.
func ApproveMCPPin(path, server, tool, want string) (old, now string, err error) {
	pins, err := mcpgate.OpenPins(path)
	if err != nil {
		return "", "", WithCode(ExitError, err)
	}
	o, n, err := pins.Approve(server, tool, want)
	if err != nil {
		return "", "", WithCode(ExitError, err)
	}
	return o.Digest, n.Digest, nil
}

// definitionLines renders a pinned definition for a line diff.
func definitionLines(d mcpgate.Definition) []string {
	var lines []string
	if d.Title != "" {
		lines = append(lines, "title: "+textesc.String(d.Title))
	}
	for _, l := range strings.Split(d.Description, "\n") {
		lines = append(lines, "description: "+textesc.String(l))
	}
	var schema any
	if json.Unmarshal(d.InputSchema, &schema) == nil {
		b, _ := json.MarshalIndent(schema, "", "  ")
		for _, l := range strings.Split(string(b), "\n") {
			lines = append(lines, "schema: "+textesc.String(l))
		}
	}
	return lines
}

// lineDiff is a line diff of a and b (longest common subsequence): each
// line of the result is "  ", "- " or "+ " and a line of a or b. Inputs
// too large for the table are shown as all removed, then all added.
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	var out []string
	if n*m > 4<<20 {
		for _, l := range a {
			out = append(out, "- "+l)
		}
		for _, l := range b {
			out = append(out, "+ "+l)
		}
		return out
	}
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	return out
}
