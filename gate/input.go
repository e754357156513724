package gate

import (
	"github.com/clawsec/claw/gate/shell"
	"github.com/clawsec/claw/internal/toolkind"
)

// InputVersion is the version of the input document the policies see.
const InputVersion = 1

// Action is one proposed action: a tool and its arguments, as a model or a
// user proposed it.
type Action struct {
	Tool toolkind.Kind  `json:"tool"`
	Args map[string]any `json:"args"`
}

// Context is what the gate knows about where the action would run.
type Context struct {
	Autonomy  string `json:"autonomy"`  // readonly | supervised | full
	Workspace string `json:"workspace"` // canonical absolute path
	Cwd       string `json:"cwd"`       // canonical absolute path
	Home      string `json:"home"`
	Channel   string `json:"channel"`
	Estop     bool   `json:"estop"`
	// Conversation is the id of the conversation the action belongs to
	// ("" when none); grants may be scoped to one.
	Conversation string `json:"conversation"`
}

// URLInfo is the gate's analysis of the http tool's URL.
type URLInfo struct {
	Raw      string `json:"raw"`
	Scheme   string `json:"scheme"`   // lower case
	Host     string `json:"host"`     // lower case, no trailing dot, no brackets
	Port     int    `json:"port"`     // explicit or the scheme's default
	Userinfo bool   `json:"userinfo"` // user[:pass]@ present
	// IP is the host as a canonical IP address when it is written as one in
	// any notation (dotted, decimal, hex, octal, short, IPv4-mapped IPv6).
	IP string `json:"ip"`
	// Class is "public", "loopback", "private", "link_local", "metadata",
	// "unspecified", "multicast", "reserved" or "invalid". Hostnames that
	// name local or metadata services ("localhost", "*.localhost",
	// "metadata.google.internal", …) are classed like their addresses.
	Class string `json:"class"`
	Error string `json:"error"` // non-empty: unparseable URL
}

// Input is the document the policies evaluate (input.*). Go builds all of
// it; the policies never parse strings themselves.
type Input struct {
	Version int    `json:"version"`
	Action  Action `json:"action"`
	// Kind is the action kind the gate recognised ("shell", "file_read",
	// "file_write", "edit_file", "file_list", "http", "time",
	// "memory_search", "tool", "plugin") or "unknown".
	Kind toolkind.Kind `json:"kind"`
	// Parsed is the shell analysis; empty for other kinds.
	Parsed *shell.Analysis `json:"parsed"`
	// Paths are the canonical paths the action touches (symlinks resolved,
	// the parent's for a path that does not exist yet).
	Paths []string `json:"paths"`
	// Writes are the canonical paths the action would create or modify.
	Writes []string `json:"writes"`
	// Destinations are the canonical network destinations of a shell
	// action (every network client and package manager it runs).
	Destinations []Destination `json:"destinations"`
	// URL is the analysed URL of an http action.
	URL *URLInfo `json:"url"`
	// Errors are problems found while building the input (bad argument
	// types, NUL bytes in paths, unresolvable /proc forms). Any entry
	// makes the policies deny with rule input.invalid.
	Errors  []string `json:"errors"`
	Context Context  `json:"context"`
	// Plugin is what the broker found of the plugin a "plugin" action
	// calls; nil for other kinds, and when nobody looked it up.
	Plugin *PluginInfo `json:"plugin"`
}

// PluginInfo is an installed plugin as the policies see it.
type PluginInfo struct {
	Name   string `json:"name"`
	Tool   string `json:"tool"`
	Status string `json:"status"` // ok, changed, not_installed, unknown_tool, invalid_args
	Detail string `json:"detail"`
}
