// Package bypass embeds the bypass corpus that `claw gate test --bypass-suite`
// runs against the policies in force. See README.md for the case format.
package bypass

import "embed"

// FS holds the *.jsonl case files.
//
//go:embed *.jsonl
var FS embed.FS
