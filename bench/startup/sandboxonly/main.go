// Command sandboxonly runs its arguments in claw's sandbox with the
// defaults of `claw sandbox run` and nothing else: executor.Run from a
// program that links only the executor. It is the floor of a sandbox
// command that would not start the whole claw binary.
package main

import (
	"context"
	"os"

	"github.com/clawsec/claw/executor"
)

func main() {
	res, err := executor.Run(context.Background(), executor.Spec{Argv: os.Args[1:]})
	if err != nil {
		os.Stderr.WriteString("sandboxonly: " + err.Error() + "\n")
		os.Exit(126)
	}
	os.Stdout.Write(res.Stdout)
	os.Stderr.Write(res.Stderr)
	os.Exit(res.ExitCode)
}
