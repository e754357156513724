//go:build linux

// Command ttydrive runs a program on a pseudo-terminal and plays a dialogue
// against it: wait for a prompt, then type. The end-to-end tests and the
// demo use it; the dialogue format is described in internal/ttydrive.
//
//	go run ./scripts/ttydrive [-timeout D] DIALOGUE PROGRAM [ARGS...]
package main

import (
	"os"

	"github.com/clawsec/claw/internal/ttydrive"
)

func main() { os.Exit(ttydrive.Main(os.Args[1:])) }
