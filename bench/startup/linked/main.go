// Command linked prints hello and exits: with no build tag, the start of
// any Go program here; with a tag, the same program with one library claw
// links (its package initialisation and its size), to see what each adds
// to claw's start:
//
//	-tags opa       the OPA evaluator (github.com/open-policy-agent/opa/v1/rego)
//	-tags sigstore  sigstore's signature package (receipts)
//	-tags mcp       the MCP SDK and the SQLite driver
//	-tags seccomp   libseccomp through cgo (the executor)
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
