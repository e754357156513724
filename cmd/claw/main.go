// Command claw is a policy-first security gateway and sandboxed executor
// for LLM agents. See the README for the command reference.
package main

import "os"

func main() { os.Exit(run(os.Args[1:])) }
