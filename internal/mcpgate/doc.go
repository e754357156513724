// Package mcpgate puts claw's one path (gate → receipt → approval →
// sandbox → receipt) behind the Model Context Protocol.
//
// Two shapes are provided:
//
//   - [NewServer] exposes claw's own tools (shell, file_read, file_write,
//     edit_file, file_list, http, time) as MCP tools with JSON Schemas.
//     Every call becomes a [gate.Action] taken through an [Invoker] (the
//     broker).
//   - [Proxy] sits in front of a third-party MCP server. It lists the
//     upstream tools, re-exports each one as SERVER__TOOL, and turns every
//     call into a claw action of kind "tool" with arguments
//     {server, name, args}. The broker runs the call in-process through
//     [Proxy.Forward] once the gate (and, if asked, a human) allowed it.
//
// # Results
//
// A denial, a rejected or timed-out approval, an action that needs an
// approval nobody could give, a sandbox that could not be applied, and a
// tool failure are all tool results with isError set and the reasons in
// the text: never protocol errors, so the model sees why.
//
// Upstream results are rebuilt from their content alone: text, images and
// audio are copied, links and embedded resources become text, and every
// _meta, annotation and structuredContent of the upstream is dropped. The
// rebuilt result is bounded ([DefaultMaxResultBytes]); text past the bound
// is cut and says so.
//
// # Pinning
//
// Tool descriptions and input schemas are instructions to the model, so a
// changed description is a changed program (tool poisoning). The proxy
// records a SHA-256 of each tool's title, description and input schema in
// a [Pins] file the first time it sees the tool. A tool whose definition
// later differs is disabled: it is not listed, and a call returns a tool
// error that names the command to re-approve it (claw mcp pin SERVER
// TOOL), and, when [Proxy.Log] is set, a deny receipt with the reason
// "mcp.pin_changed". The changed definition is kept as pending in the pins file, so
// the pin command can show what changed before approving it.
//
// The pins file is JSON, mode 0600, replaced atomically:
//
//	{"version":1,"servers":{"fs":{"stat":{"digest":"sha256:…",
//	  "description":"…","input_schema":{…},"pinned":"2026-11-23T10:00:00Z",
//	  "pending":{"digest":"sha256:…",…}}}}}
package mcpgate
