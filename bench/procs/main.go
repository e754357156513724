// Command procs times whole processes side by side: each round runs every
// contender once, in turn, so a busy machine slows them alike. It prints a
// markdown table (median, p90, p99, CPU of the child, ratio to the first
// contender) and the load average before and after.
//
//	go run ./bench/procs -n 100 -c 'claw version||claw version' -c 'hook|event.json|claw hook claude-code'
//
// Each -c is NAME|STDIN|COMMAND ARG...: the arguments are split on spaces;
// STDIN, when not empty, is a file given on standard input.
//
// -pause D waits D, untimed, before every run: each contender then starts
// the way a tool call of an agent does, after the machine did other things
// for a while (its model thinking), instead of right after the contender
// before it. Without it, a contender that follows a heavy one inherits
// caches that one evicted, and one that follows a light one does not.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

type contender struct {
	name, stdin string
	argv        []string
	wall, cpu   []time.Duration
}

type list []string

func (l *list) String() string     { return strings.Join(*l, ", ") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	var cs list
	n := flag.Int("n", 100, "rounds")
	warm := flag.Int("warmup", 3, "rounds not counted")
	pause := flag.Duration("pause", 0, "untimed wait before every run")
	flag.Var(&cs, "c", "NAME|STDIN|COMMAND ARG... (repeatable; the first is the anchor)")
	flag.Parse()
	var all []*contender
	for _, c := range cs {
		parts := strings.SplitN(c, "|", 3)
		if len(parts) != 3 || strings.TrimSpace(parts[2]) == "" {
			fmt.Fprintf(os.Stderr, "procs: -c %q is not NAME|STDIN|COMMAND\n", c)
			os.Exit(2)
		}
		all = append(all, &contender{name: parts[0], stdin: parts[1], argv: strings.Fields(parts[2])})
	}
	if len(all) == 0 {
		fmt.Fprintln(os.Stderr, "procs: no contender (-c)")
		os.Exit(2)
	}
	fmt.Printf("load average before: %s\n\n", load())
	for i := 0; i < *warm+*n; i++ {
		for _, c := range all {
			time.Sleep(*pause)
			w, cpu, err := c.run()
			if err != nil {
				fmt.Fprintf(os.Stderr, "procs: %s: %v\n", c.name, err)
				os.Exit(1)
			}
			if i >= *warm {
				c.wall, c.cpu = append(c.wall, w), append(c.cpu, cpu)
			}
		}
	}
	fmt.Printf("| what | median | p90 | p99 | CPU (median) | × %s |\n|---|---|---|---|---|---|\n", all[0].name)
	base := median(all[0].wall)
	for _, c := range all {
		m := median(c.wall)
		fmt.Printf("| %s | %s | %s | %s | %s | %.2f |\n", c.name, ms(m), ms(pct(c.wall, 0.90)), ms(pct(c.wall, 0.99)), ms(median(c.cpu)), float64(m)/float64(base))
	}
	fmt.Printf("\nn=%d rounds each, interleaved, %v untimed before each run; load average after: %s\n", *n, *pause, load())
}

// run runs the contender once; a non-zero exit is an error except 2 for a
// hook that blocks, which is an answer.
func (c *contender) run() (wall, cpu time.Duration, err error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	if c.stdin != "" {
		b, err := os.ReadFile(c.stdin)
		if err != nil {
			return 0, 0, err
		}
		cmd.Stdin = bytes.NewReader(b)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %s", err, errb.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return wall, cpu, nil
}

func median(d []time.Duration) time.Duration { return pct(d, 0.5) }

func pct(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}
