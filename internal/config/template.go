package config

import (
	"bytes"
	_ "embed"
)

//go:embed template.toml
var template []byte

// Template returns the commented config.toml that `claw init` writes. Parsed,
// it equals [Default].
func Template() []byte { return bytes.Clone(template) }
