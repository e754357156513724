package shell

import (
	"slices"
	"testing"
)

func TestArithmetic(t *testing.T) {
	const notInt = "arithmetic on $x, which is not a plain integer"
	const subst = "command substitution in an array subscript given to "
	for _, tc := range []struct {
		name    string
		src     string
		dynamic bool
		reason  string
	}{
		{name: "literal", src: "echo $((1+2)) $((0x1f)) $((2#101)) $((10#08))"},
		{name: "assigned integer", src: "i=3; echo $((i+1))"},
		{name: "C-style for", src: "for ((i=0; i<3; i++)); do echo $i; done"},
		{name: "for over integers", src: "for i in {1..5} 7; do echo $((i*2)); done"},
		{name: "let and arithmetic assignment", src: "let x=1+2; ((y = x * 2)); echo $((x + y)) ${#s} ${a[0]} ${s:1:2}"},
		{name: "arithmetic result", src: "x=$((1+2)); n=\"$(( x * 2 ))\"; echo $((x+n))"},
		{name: "numbers bash sets", src: "echo $((RANDOM % 6)) $(($# + $?)) $((SECONDS))"},
		{name: "default values", src: "x=1; echo $(( ${x:-0} + ${y:+1} ))"},
		{name: "associative subscripts are strings", src: "declare -A m; m[k]=1; echo ${m[k]} ${m[$k]}"},

		{name: "string value", src: "x='a[$(rm -rf ~)]'; echo $((x))", dynamic: true, reason: notInt},
		{name: "arithmetic command", src: "x='a[$(rm -rf ~)]'; (( x ))", dynamic: true, reason: notInt},
		{name: "[[ -gt ]]", src: "x='a[$(rm -rf ~)]'; [[ $x -gt 0 ]]", dynamic: true, reason: notInt},
		{name: "[[ -eq ]] on a bare name", src: "x='a[$(rm -rf ~)]'; [[ x -eq 0 ]]", dynamic: true, reason: notInt},
		{name: "let", src: "x='a[$(rm -rf ~)]'; let y=x", dynamic: true, reason: notInt},
		{name: "array subscript", src: "x='a[$(rm -rf ~)]'; echo ${arr[x]}", dynamic: true, reason: notInt},
		{name: "substring offset", src: "x='a[$(rm -rf ~)]'; echo ${s:x}", dynamic: true, reason: notInt},
		{name: "assignment after use", src: "echo $((x)); x='a[$(id)]'", dynamic: true, reason: notInt},
		{name: "assignment in a loop body", src: "x=1; while :; do echo $((x)); x='a[$(id)]'; done", dynamic: true, reason: notInt},
		{name: "assignment in eval", src: "x=1; eval \"x='a[\\$(id)]'\"; echo $((x))", dynamic: true, reason: notInt},
		{name: "read", src: "read x; echo $((x))", dynamic: true, reason: notInt},
		{name: "for over words", src: "for x in a b; do echo $((x)); done", dynamic: true, reason: notInt},
		{name: "from the environment", src: "echo $((x))", dynamic: true, reason: notInt},
		{name: "after source", src: "x=1; . ./env; echo $((x))", dynamic: true, reason: notInt},
		{name: "command output", src: "echo $(( $(curl x) + 1 ))", dynamic: true, reason: "command output evaluated as arithmetic"},
		{name: "positional parameter", src: "echo $(( $1 + 1 ))", dynamic: true, reason: "positional parameter $1 evaluated as arithmetic"},
		{name: "integer attribute", src: "declare -i n; n='a[$(id)]'", dynamic: true, reason: "integer variable n assigned a value that is not a plain integer"},
		{name: "indexed subscript from a variable", src: "echo ${arr[$x]}", dynamic: true, reason: notInt},

		{name: "[[ -v ]]", src: "[[ -v 'a[$(rm -rf ~)]' ]]", dynamic: true, reason: subst + "[[ -v ]]"},
		{name: "[[ -v ]] of an expansion", src: "[[ -v $x ]]", dynamic: true, reason: "variable name from expansion in [[ -v ]]"},
		{name: "test -v", src: "test -v 'a[$(id)]'", dynamic: true, reason: subst + "test"},
		{name: "unset", src: "unset 'a[$(rm -rf ~)]'", dynamic: true, reason: subst + "unset"},
		{name: "unset of an expansion", src: "unset \"$x\"", dynamic: true, reason: "variable name from expansion in unset"},
		{name: "read into a subscript", src: "read 'a[$(rm -rf ~)]' <<< 1", dynamic: true, reason: subst + "read"},
		{name: "printf -v", src: "printf -v 'a[$(rm -rf ~)]' %s 1", dynamic: true, reason: subst + "printf"},
		{name: "name reference", src: "declare -n r='a[$(rm -rf ~)]'", dynamic: true, reason: subst + "declare"},
		{name: "name reference to an expansion", src: "local -n r=$1", dynamic: true, reason: "name reference to an expansion in local"},
		{name: "export of a subscript", src: "export 'a[$(id)]'", dynamic: true, reason: subst + "export"},
		{name: "compound assignment in a string", src: "declare -a v='([0]=$(id))'", dynamic: true, reason: "array value from a string in declare"},
		{name: "indirect expansion", src: "echo ${!x}", dynamic: true, reason: "indirect expansion ${!x}"},
		{name: "prompt expansion", src: "x='$(id)'; echo ${x@P}", dynamic: true, reason: "prompt expansion ${x@P}"},

		{name: "names and keys are not indirection", src: "echo ${!a[@]} ${!pre*}"},
		{name: "printf without -v", src: "printf '%s\\n' 'a[$(id)]'"},
		{name: "a string never evaluated", src: "x='a[$(id)]'; echo \"$x\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Analyze(tc.src, testOpts)
			if a.Error != "" {
				t.Fatalf("Error = %q", a.Error)
			}
			if a.Dynamic != tc.dynamic {
				t.Fatalf("%s: Dynamic = %v, want %v (reasons %q)", tc.src, a.Dynamic, tc.dynamic, a.DynamicReasons)
			}
			if tc.reason != "" && !slices.Contains(a.DynamicReasons, tc.reason) {
				t.Errorf("%s: reasons %q, want %q", tc.src, a.DynamicReasons, tc.reason)
			}
		})
	}
}
