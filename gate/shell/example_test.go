package shell_test

import (
	"fmt"

	"github.com/clawsec/claw/gate/shell"
)

func ExampleAnalyze() {
	a := shell.Analyze(`sudo -u root bash -lc 'cd / && rm -rf .'`, shell.Options{Cwd: "/ws", Home: "/home/u"})
	for _, c := range a.Commands {
		fmt.Println(c.Name, c.Opts, c.Paths, c.Depth, c.Via, c.Marks)
	}
	// Output:
	// bash [l c] [] 0 [sudo] [{interpreter bash} {privilege sudo}]
	// cd [] [/] 1 [sudo bash -c] [{privilege sudo}]
	// rm [r f] [/] 1 [sudo bash -c] [{privilege sudo}]
}
