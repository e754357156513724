// Command claw is a policy-first security gateway and sandboxed executor
// for LLM agents. See the README for the command reference.
package main

import (
	"os"
	"regexp"
	"sync"
)

func main() { os.Exit(run(os.Args[1:])) }

// lazyRegexp returns a function that compiles expr on its first call, so
// that starting claw compiles no expression the command does not use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
