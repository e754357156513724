// Package toolkind names the kinds of action claw knows: the tool of an
// action as the agent proposes it, the gate decides on it, the broker
// records it and the executor runs it. Every package that compares or sets
// a tool name uses these names instead of writing the string again.
//
// The names are untyped constants, so that they fit the string fields
// that carry a tool today (gate.Action.Tool, executor.Spec.Tool, a tool
// call's name). Anything else is a tool the gate does not know, and is
// denied as the kind "unknown".
package toolkind

// The kinds of action.
const (
	Shell        = "shell"         // a shell command
	FileRead     = "file_read"     // read a file
	FileWrite    = "file_write"    // write a file whole
	EditFile     = "edit_file"     // replace one string in a file
	FileList     = "file_list"     // list a directory tree
	HTTP         = "http"          // an HTTP request
	Time         = "time"          // the current time
	MemorySearch = "memory_search" // search earlier conversations
	AskUser      = "ask_user"      // ask the person a question
	YieldToUser  = "yield_to_user" // end an autonomous turn
	MCP          = "tool"          // a tool of an MCP server
	Plugin       = "plugin"        // a tool of an installed plugin
	Delegate     = "delegate"      // a sub-task for a sub-agent
)
