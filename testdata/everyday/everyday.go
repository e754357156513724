// Package everyday embeds a corpus of ordinary development actions in Go,
// Python, Node, Rust and C projects (inspect, edit, build, test, git,
// archives, dependency installs from the default registries), written as
// developers type them. At supervised autonomy none may be denied and at
// most a few may ask: a gate its user must approve all day is a gate its
// user turns off.
package everyday

import "embed"

// FS holds the *.jsonl case files (the format of gate.ParseCases).
//
//go:embed *.jsonl
var FS embed.FS
