package main

import "github.com/clawsec/claw/internal/toolkind"

// step is one action of the session, in one of the projects.
type step struct {
	project string
	tool    toolkind.Kind
	args    map[string]any
}

func sh(p, cmd string) step { return step{p, "shell", map[string]any{"command": cmd}} }
func read(p, path string) step {
	return step{p, "file_read", map[string]any{"path": path}}
}
func list(p, path string) step {
	return step{p, "file_list", map[string]any{"path": path}}
}
func write(p, path, content string) step {
	return step{p, "file_write", map[string]any{"path": path, "content": content}}
}
func edit(p, path, old, new string) step {
	return step{p, "edit_file", map[string]any{"path": path, "old": old, "new": new}}
}

// projects are the files of the three small projects the session works
// on; each is a git repository with one commit before the session starts.
var projects = map[string]map[string]string{
	"goproj": {
		"go.mod":       "module example.com/calc\n\ngo 1.22\n",
		"calc.go":      "package main\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a + b }\n",
		"calc_test.go": "package main\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(3, 1) != 2 {\n\t\tt.Fatal(Sub(3, 1))\n\t}\n}\n",
		"main.go":      "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(Add(1, 2)) }\n",
		"README.md":    "# calc\n",
	},
	"pyproj": {
		"pyproject.toml":   "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
		"calc.py":          "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n",
		"test_calc.py":     "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n",
		"requirements.txt": "",
		"README.md":        "# calc\n",
	},
	"nodeproj": {
		"package.json": "{\n  \"name\": \"calc\",\n  \"version\": \"0.1.0\",\n  \"scripts\": {\"test\": \"node --test\"}\n}\n",
		"index.js":     "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a + b;\n",
		"test.js":      "const assert = require('node:assert');\nconst test = require('node:test');\nconst { sub } = require('./index.js');\ntest('sub', () => assert.strictEqual(sub(3, 1), 2));\n",
		"README.md":    "# calc\n",
	},
}

// session is a day of ordinary work on the three projects: read, search,
// build, test, fix, commit, add a dependency. Each project is its own
// workspace, as claw is set up per project.
var steps = []step{
	// Go
	list("goproj", "."),
	read("goproj", "go.mod"),
	read("goproj", "main.go"),
	read("goproj", "calc.go"),
	read("goproj", "calc_test.go"),
	sh("goproj", "git status"),
	sh("goproj", "git log --oneline -n 5"),
	sh("goproj", "grep -rn 'func ' ."),
	sh("goproj", "go build ./..."),
	sh("goproj", "go test ./..."),
	edit("goproj", "calc.go", "return a + b }\n", "return a - b }\n"),
	sh("goproj", "go test ./..."),
	sh("goproj", "go vet ./..."),
	sh("goproj", "git diff"),
	sh("goproj", "git add -A"),
	sh("goproj", "git commit -m 'calc: fix Sub'"),
	write("goproj", "div.go", "package main\n\nfunc Div(a, b int) int { return a / b }\n"),
	write("goproj", "div_test.go", "package main\n\nimport \"testing\"\n\nfunc TestDiv(t *testing.T) {\n\tif Div(6, 3) != 2 {\n\t\tt.Fatal()\n\t}\n}\n"),
	sh("goproj", "go test -run TestDiv ./..."),
	edit("goproj", "div.go", "return a / b }", "if b == 0 {\n\t\treturn 0\n\t}\n\treturn a / b\n}"),
	sh("goproj", "go test ./..."),
	sh("goproj", "go build ./..."),
	sh("goproj", "git status"),
	sh("goproj", "git add div.go div_test.go"),
	sh("goproj", "git commit -m 'calc: add Div'"),
	sh("goproj", "go get golang.org/x/text@v0.14.0"),
	sh("goproj", "go mod tidy"),
	read("goproj", "go.mod"),
	sh("goproj", "ls -la"),
	sh("goproj", "find . -name '*.go'"),
	sh("goproj", "wc -l calc.go div.go main.go"),
	edit("goproj", "main.go", "Add(1, 2)", "Add(1, 2), Div(6, 3)"),
	sh("goproj", "go run ."),
	sh("goproj", "go test -cover ./..."),
	sh("goproj", "git diff --stat"),
	sh("goproj", "git commit -am 'main: print Div'"),
	sh("goproj", "git log --oneline"),
	read("goproj", "README.md"),
	edit("goproj", "README.md", "# calc\n", "# calc\n\nAdd, Sub and Div.\n"),
	sh("goproj", "git commit -am 'readme'"),

	// Python
	list("pyproj", "."),
	read("pyproj", "pyproject.toml"),
	read("pyproj", "calc.py"),
	read("pyproj", "test_calc.py"),
	sh("pyproj", "git status"),
	sh("pyproj", "grep -rn 'def ' ."),
	sh("pyproj", "python3 -m pytest -q"),
	edit("pyproj", "calc.py", "def sub(a, b):\n    return a + b", "def sub(a, b):\n    return a - b"),
	sh("pyproj", "python3 -m pytest -q"),
	sh("pyproj", "python3 -m pytest -q -k sub"),
	write("pyproj", "utils.py", "def div(a, b):\n    return a / b if b else 0\n"),
	write("pyproj", "test_utils.py", "from utils import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n"),
	sh("pyproj", "python3 -m pytest -q"),
	sh("pyproj", "python3 -m pip install requests"),
	sh("pyproj", "python3 calc.py"),
	sh("pyproj", "git add -A"),
	sh("pyproj", "git commit -m 'calc: fix sub, add div'"),
	sh("pyproj", "git diff HEAD~1"),
	edit("pyproj", "utils.py", "return a / b if b else 0", "return a / b if b else 0.0"),
	sh("pyproj", "python3 -m pytest -q"),
	sh("pyproj", "ls"),
	sh("pyproj", "find . -name '*.py'"),
	read("pyproj", "requirements.txt"),
	write("pyproj", "requirements.txt", "requests==2.32.3\n"),
	sh("pyproj", "git add requirements.txt"),
	sh("pyproj", "git commit -m 'deps: requests'"),
	sh("pyproj", "git log --oneline"),
	sh("pyproj", "head -n 20 calc.py"),
	sh("pyproj", "wc -l calc.py utils.py"),
	sh("pyproj", "python3 -m compileall -q ."),
	sh("pyproj", "git status"),
	edit("pyproj", "README.md", "# calc\n", "# calc\n\nadd, sub and div.\n"),

	// Node
	list("nodeproj", "."),
	read("nodeproj", "package.json"),
	read("nodeproj", "index.js"),
	read("nodeproj", "test.js"),
	sh("nodeproj", "git status"),
	sh("nodeproj", "npm test"),
	sh("nodeproj", "node --test"),
	edit("nodeproj", "index.js", "exports.sub = (a, b) => a + b;", "exports.sub = (a, b) => a - b;"),
	sh("nodeproj", "node --test"),
	sh("nodeproj", "npm install left-pad"),
	read("nodeproj", "package.json"),
	sh("nodeproj", "git diff"),
	sh("nodeproj", "git add -A"),
	sh("nodeproj", "git commit -m 'index: fix sub'"),
	write("nodeproj", "math.js", "exports.div = (a, b) => (b ? a / b : 0);\n"),
	write("nodeproj", "math.test.js", "const assert = require('node:assert');\nconst test = require('node:test');\nconst { div } = require('./math.js');\ntest('div', () => assert.strictEqual(div(6, 3), 2));\n"),
	sh("nodeproj", "node --test"),
	sh("nodeproj", "grep -rn require ."),
	sh("nodeproj", "ls"),
	sh("nodeproj", "find . -name '*.js' -not -path './node_modules/*'"),
	edit("nodeproj", "math.js", "(b ? a / b : 0)", "(b === 0 ? 0 : a / b)"),
	sh("nodeproj", "node --test"),
	sh("nodeproj", "git add -A"),
	sh("nodeproj", "git commit -m 'math: div'"),
	sh("nodeproj", "git log --oneline"),
	sh("nodeproj", "cat package.json"),
	sh("nodeproj", "wc -l index.js math.js"),
	sh("nodeproj", "head -n 5 test.js"),
	sh("nodeproj", "npm ls"),
	edit("nodeproj", "README.md", "# calc\n", "# calc\n\nadd, sub and div.\n"),
	sh("nodeproj", "git commit -am 'readme'"),
	sh("nodeproj", "git status"),
}
