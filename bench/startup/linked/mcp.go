//go:build mcp

package main

import (
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"
)
