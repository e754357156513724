package main

// sandboxUsable reports whether the kernel offers what the executor needs.
// The executor package replaces this with its real probe.
var sandboxUsable = func() bool { return false }
