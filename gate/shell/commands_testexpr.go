package shell

import (
	"strings"
)

// --- test and [ ---

var (
	testFileOps   = set("-a -b -c -d -e -f -g -h -k -p -r -s -u -w -x -G -L -N -O -S")
	testStringOps = set("-z -n -v -R -o -t")
	testBinFileOp = set("-nt -ot -ef")
	testBinary    = set("-a -o = == != < > =~ -eq -ne -lt -le -gt -ge -nt -ot -ef")
)

// test handles test and [: the operands of file tests are paths.
func (b *build) test() {
	args := b.args
	n := len(args)
	if b.name == "[" && n > 1 && !args[n-1].dyn && args[n-1].val == "]" {
		n--
	}
	expect, pathNext, last := true, false, -1
	operand := func(i int, path bool) {
		b.cmd.Operands = append(b.cmd.Operands, args[i].val)
		b.p.operands = append(b.p.operands, i)
		if path || pathNext {
			b.path(args[i])
		}
		expect, pathNext, last = false, false, i
	}
	for i := 1; i < n; i++ {
		f := args[i]
		v := f.val
		if !f.dyn {
			switch {
			case expect && (v == "!" || v == "("):
				continue
			case !expect && v == ")":
				continue
			case !expect && testBinary[v]:
				if strings.HasPrefix(v, "-") {
					b.cmd.Opts = append(b.cmd.Opts, v[1:])
				}
				if testBinFileOp[v] {
					if last >= 0 {
						b.path(args[last])
					}
					pathNext = true
				}
				expect = true
				continue
			case expect && i+1 < n && testFileOps[v]:
				b.cmd.Opts = append(b.cmd.Opts, v[1:])
				i++
				operand(i, true)
				continue
			case expect && i+1 < n && testStringOps[v]:
				b.cmd.Opts = append(b.cmd.Opts, v[1:])
				i++
				operand(i, false)
				continue
			}
		}
		operand(i, false)
	}
}
