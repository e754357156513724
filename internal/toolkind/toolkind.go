// Package toolkind names the kinds of action claw knows: the tool of an
// action as the agent proposes it, the gate decides on it, the broker
// records it and the executor runs it. Every package that compares or sets
// a tool name uses these names instead of writing the string again.
//
// A Kind is a string type: the fields that carry a tool inside claw
// (gate.Action.Tool, gate.Input.Kind, executor.Spec.Tool, a grant scope's
// tool, a catalog tool's name) are Kinds, and a name that comes from
// outside (a model's tool call, a hook event, a command line) becomes one
// at that edge with Kind(name). It encodes and decodes as the plain JSON
// string. Any name not listed here is a tool the gate does not know, and
// is denied as the kind Unknown.
package toolkind

// Kind is the kind of an action: the name of its tool.
type Kind string

// The kinds of action.
const (
	Shell        Kind = "shell"         // a shell command
	FileRead     Kind = "file_read"     // read a file
	FileWrite    Kind = "file_write"    // write a file whole
	EditFile     Kind = "edit_file"     // replace one string in a file
	FileList     Kind = "file_list"     // list a directory tree
	HTTP         Kind = "http"          // an HTTP request
	Time         Kind = "time"          // the current time
	MemorySearch Kind = "memory_search" // search earlier conversations
	AskUser      Kind = "ask_user"      // ask the person a question
	YieldToUser  Kind = "yield_to_user" // end an autonomous turn
	MCP          Kind = "tool"          // a tool of an MCP server
	Plugin       Kind = "plugin"        // a tool of an installed plugin
	Delegate     Kind = "delegate"      // a sub-task for a sub-agent
)

// Unknown is the kind the gate gives an action whose tool is none of the
// kinds above; the policies deny it.
const Unknown Kind = "unknown"
