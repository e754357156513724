package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// The command examples of README.md and docs/*.md are run by
// TestDocExamples, so an example that stops working (or a new one that
// never did) fails the tests. The conventions, for whoever writes one:
//
//   - Every fenced block tagged sh, bash, shell or console is an example.
//     In a console block the lines starting with "$ " are the commands and
//     the rest is output, which is not compared. Synopses with
//     placeholders ("claw receipt list [--since T]") go in an untagged
//     block, which is not run.
//   - Each command must exit 0, unless its trailing comment says
//     "exit N" (for example "# deny, exit 3").
//   - A block runs in a fresh HOME, with CLAW_HOME=$HOME/.claw,
//     its working directory a fresh directory that holds bin/claw; the
//     commands of a block run one after the other in one bash, so a
//     variable or a file one of them makes is there for the next.
//   - An HTML comment right before the block, starting with
//     "<!-- example", sets it up, one "key: value" per line:
//     setup: CMD     a command run first in the same bash (repeatable;
//                    it must exit 0; "&" starts a daemon, which is
//                    killed when the block ends)
//     needs: WHAT    the block runs only where the sandbox works (sandbox),
//                    as root (root), or with a program on PATH (jq)
//     skip: KIND WHY the block is not run; KIND is one of exampleSkipKinds
//     timeout: DUR   the block's limit (default 30s)
//
// For example:
//
//	<!-- example
//	setup: claw init
//	setup: claw keys generate --unencrypted
//	needs: sandbox
//	-->

// exampleSkipKinds are the only reasons an example may be left unrun.
var exampleSkipKinds = map[string]string{
	"provider": "needs a real model provider and its key",
	"systemd":  "installs or inspects a system service (needs systemd and sudo)",
	"external": "needs a program claw does not ship and a test cannot install (Claude Code, Node.js packages)",
	"checkout": "builds or tests the source checkout itself",
	"terminal": "needs a person at a terminal",
}

// exampleHint ends a failure: where to read how examples are written.
const exampleHint = `fix the example or its comment: "# exit N" for a documented status, an <!-- example --> comment with setup:, needs: or skip: before the block; see the top of cmd/claw/examples_test.go`

// docExample is one command of a fenced block.
type docExample struct {
	line  int    // line of the command in its file
	text  string // the command, as written
	want  int    // the exit status its comment documents (default 0)
	noted bool   // the comment names the status
}

// docBlock is one fenced block of examples, with its marker.
type docBlock struct {
	file    string // relative to the repository root
	line    int    // line of the opening fence
	setup   []string
	needs   []string
	skip    string
	timeout time.Duration
	cmds    []docExample
	// src is the block's script: each command wrapped so that its exit
	// status and output are recorded (see exampleScript).
	src string
}

func (b *docBlock) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var (
	fenceRE      = regexp.MustCompile("^(\\s*)(```+|~~~+)\\s*([A-Za-z0-9_-]*)")
	exitStatusRE = regexp.MustCompile(`\bexit (\d+)\b`)
	exampleLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}
)

// docFiles are the files whose examples are run: README.md and docs/*.md.
func docFiles(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	return files, nil
}

// parseDocBlocks returns the example blocks of one markdown file.
func parseDocBlocks(name string, src []byte) ([]docBlock, error) {
	lines := strings.Split(string(src), "\n")
	var (
		blocks []docBlock
		marker []string // lines of a pending <!-- example --> comment
		mline  int
	)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "<!-- example") {
			start := i
			body := strings.TrimPrefix(trimmed, "<!-- example")
			for !strings.Contains(body, "-->") {
				i++
				if i == len(lines) {
					return nil, fmt.Errorf("%s:%d: <!-- example comment is not closed with -->", name, start+1)
				}
				body += "\n" + strings.TrimSpace(lines[i])
			}
			body, rest, _ := strings.Cut(body, "-->")
			if strings.TrimSpace(rest) != "" {
				return nil, fmt.Errorf("%s:%d: text after the --> of an example comment", name, i+1)
			}
			marker, mline = strings.Split(strings.TrimPrefix(strings.TrimSpace(body), ":"), "\n"), start+1
			continue
		}
		m := fenceRE.FindStringSubmatch(l)
		if m != nil && m[2][0] == '`' && strings.Contains(l[len(m[0]):], "`") {
			m = nil // inline code at the start of a line, not a fence
		}
		if m == nil {
			if trimmed != "" && marker != nil {
				return nil, fmt.Errorf("%s:%d: an <!-- example --> comment must come right before a fenced sh or console block", name, mline)
			}
			continue
		}
		indent, fence, lang := m[1], m[2], m[3]
		open := i + 1
		var body []string
		for i++; i < len(lines); i++ {
			if t := strings.TrimSpace(lines[i]); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				break
			}
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: fenced block is not closed", name, open)
		}
		if !exampleLangs[lang] {
			if marker != nil {
				return nil, fmt.Errorf("%s:%d: an <!-- example --> comment before a %q block, which is not run (only sh, bash, shell and console blocks are)", name, mline, lang)
			}
			continue
		}
		b := docBlock{file: name, line: open, timeout: 30 * time.Second}
		if err := b.applyMarker(marker, mline); err != nil {
			return nil, err
		}
		marker = nil
		if err := b.parseCommands(body, lang == "console"); err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	if marker != nil {
		return nil, fmt.Errorf("%s:%d: an <!-- example --> comment with no block after it", name, mline)
	}
	return blocks, nil
}

// applyMarker reads the key: value lines of an example comment.
func (b *docBlock) applyMarker(lines []string, line int) error {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" {
			return fmt.Errorf("%s:%d: example comment line %q: want \"key: value\" (setup, needs, skip, timeout)", b.file, line, l)
		}
		switch k {
		case "setup":
			b.setup = append(b.setup, v)
		case "needs":
			b.needs = append(b.needs, v)
		case "skip":
			kind, _, _ := strings.Cut(v, " ")
			if _, ok := exampleSkipKinds[kind]; !ok {
				return fmt.Errorf("%s:%d: skip: %q: the first word must be one of %s", b.file, line, kind, skipKindList())
			}
			b.skip = v
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s:%d: timeout: %v", b.file, line, err)
			}
			b.timeout = d
		default:
			return fmt.Errorf("%s:%d: example comment has unknown key %q (want setup, needs, skip, timeout)", b.file, line, k)
		}
	}
	return nil
}

func skipKindList() string {
	var out []string
	for k := range exampleSkipKinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// parseCommands splits a block's body into commands with the shell
// parser (so continuations, quotes and here-documents are understood) and
// builds the block's script.
func (b *docBlock) parseCommands(body []string, console bool) error {
	// lineOf maps a line of the parsed text to its line in the file.
	var text []string
	var lineOf []int
	cont := false
	for j, l := range body {
		fileLine := b.line + 1 + j
		if console {
			switch {
			case strings.HasPrefix(l, "$ "):
				l = l[2:]
			case cont:
				l = strings.TrimPrefix(l, "> ") // the shell's PS2
			default:
				continue // output
			}
			cont = strings.HasSuffix(l, `\`)
		}
		text = append(text, l)
		lineOf = append(lineOf, fileLine)
	}
	src := strings.Join(text, "\n") + "\n"
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return fmt.Errorf("%s: the block does not parse as shell: %v", b.where(), err)
	}
	var script strings.Builder
	for i, s := range b.setup {
		fmt.Fprintf(&script, "{ %s\n} >>\"$EX/setup.out\" 2>&1 </dev/null\necho \"setup %d $?\" >>\"$EX/status\"\n", s, i)
	}
	for i, st := range f.Stmts {
		first, last := int(st.Pos().Line()), int(st.End().Line())
		end := len(text)
		if i+1 < len(f.Stmts) {
			end = int(f.Stmts[i+1].Pos().Line()) - 1
		}
		if last > end {
			end = last
		}
		cmd := strings.Join(text[first-1:end], "\n")
		ex := docExample{line: lineOf[first-1], text: strings.TrimSpace(strings.Join(text[first-1:last], "\n"))}
		for _, c := range st.Comments {
			if l := int(c.Hash.Line()); l < first || l > last {
				continue
			}
			if m := exitStatusRE.FindAllStringSubmatch(c.Text, -1); m != nil {
				if len(m) > 1 {
					return fmt.Errorf("%s:%d: the comment names more than one exit status: %q", b.file, ex.line, c.Text)
				}
				ex.want, _ = strconv.Atoi(m[0][1])
				ex.noted = true
			}
			// The comment is not part of what the reader runs.
			ex.text = strings.TrimSpace(strings.TrimSuffix(ex.text, "#"+c.Text))
		}
		n := len(b.cmds)
		b.cmds = append(b.cmds, ex)
		fmt.Fprintf(&script, "{ %s\n} >\"$EX/%d.out\" 2>\"$EX/%d.err\" </dev/null\necho \"%d $?\" >>\"$EX/status\"\n", cmd, n, n, n)
	}
	if len(b.cmds) == 0 {
		return fmt.Errorf("%s: an example block with no command", b.where())
	}
	b.src = script.String()
	return nil
}

// TestDocExamples runs every command example of README.md and docs/*.md
// against the claw under test, each block in a fresh home, and checks
// each command's exit status against the one its comment documents.
func TestDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented example")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	clawPath, err := exec.LookPath("claw")
	if err != nil {
		t.Fatalf("claw is not on PATH (testscript.Main puts it there): %v", err)
	}
	var skipped []string
	for _, name := range files {
		src, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseDocBlocks(name, src)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, b := range blocks {
			if b.skip != "" {
				skipped = append(skipped, b.where()+": "+b.skip)
				continue
			}
			t.Run(strings.ReplaceAll(b.where(), "/", "_"), func(t *testing.T) {
				for _, need := range b.needs {
					if ok, why := haveNeed(need); !ok {
						t.Skip(why)
					}
				}
				runDocBlock(t, b, clawPath)
			})
		}
	}
	for _, s := range skipped {
		t.Logf("not run: %s", s)
	}
}

// runDocBlock runs one block in a fresh home and reports every command
// whose exit status differs from the documented one.
func runDocBlock(t *testing.T, b docBlock, clawPath string) {
	dir := t.TempDir()
	// Sandboxed actions may run as an unprivileged user (run_as), who
	// must reach the workspace under this directory, and claw.
	openToRunAs(dir)
	openToRunAs(filepath.Dir(clawPath))
	home, work, ex := filepath.Join(dir, "home"), filepath.Join(dir, "work"), filepath.Join(dir, "ex")
	for _, d := range []string{home, filepath.Join(work, "bin"), ex, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(clawPath, filepath.Join(work, "bin", "claw")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", b.src+"kill $(jobs -p) 2>/dev/null\nexit 0\n")
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + filepath.Dir(clawPath) + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + home,
		"CLAW_HOME=" + filepath.Join(home, ".claw"),
		"TMPDIR=" + filepath.Join(dir, "tmp"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"USER=" + os.Getenv("USER"),
		"EX=" + ex,
	}
	if v := os.Getenv("CLAW_REQUIRE_SANDBOX"); v != "" {
		cmd.Env = append(cmd.Env, "CLAW_REQUIRE_SANDBOX="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // daemons a setup started
	}
	got, err := readStatuses(filepath.Join(ex, "status"))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range b.setup {
		if st, ok := got[fmt.Sprintf("setup %d", i)]; !ok || st != 0 {
			out, _ := os.ReadFile(filepath.Join(ex, "setup.out"))
			t.Fatalf("%s: setup %q: exit %d (ran: %v)\n%s", b.where(), s, st, ok, indentText(string(out)))
		}
	}
	for n, c := range b.cmds {
		st, ok := got[strconv.Itoa(n)]
		if !ok {
			t.Errorf("%s:%d: %s\n\tdid not finish (block: %v; %s)", b.file, c.line, c.text, runErr, strings.TrimSpace(stderr.String()))
			break
		}
		if st == c.want {
			continue
		}
		out, _ := os.ReadFile(filepath.Join(ex, fmt.Sprintf("%d.out", n)))
		errOut, _ := os.ReadFile(filepath.Join(ex, fmt.Sprintf("%d.err", n)))
		how := "a command without an \"exit N\" comment must exit 0"
		if c.noted {
			how = fmt.Sprintf("its comment documents exit %d", c.want)
		}
		t.Errorf("%s:%d: %s\n\texit status %d, but %s\n\tstdout:\n%s\tstderr:\n%s\t(%s)", b.file, c.line, c.text, st, how, indentText(string(out)), indentText(string(errOut)), exampleHint)
	}
}

// haveNeed reports whether what a block needs is here: the sandbox,
// root, or a program on PATH.
func haveNeed(need string) (bool, string) {
	switch need {
	case "sandbox":
		ok, _ := scriptCondition("sandbox")
		return ok, "the sandbox does not work here"
	case "root":
		return os.Geteuid() == 0, "needs root"
	}
	_, err := exec.LookPath(need)
	return err == nil, need + " is not installed"
}

// readStatuses reads the "NAME STATUS" lines the block's script wrote.
func readStatuses(path string) (map[string]int, error) {
	out := map[string]int{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		i := strings.LastIndexByte(l, ' ')
		st, err := strconv.Atoi(l[i+1:])
		if i < 0 || err != nil {
			return nil, fmt.Errorf("bad status line %q", l)
		}
		out[l[:i]] = st
	}
	return out, sc.Err()
}

func indentText(s string) string {
	const max = 4 << 10
	if len(s) > max {
		s = s[:max] + "\n…(cut)"
	}
	if strings.TrimSpace(s) == "" {
		return "\t\t(empty)\n"
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("\t\t" + l + "\n")
	}
	return b.String()
}
