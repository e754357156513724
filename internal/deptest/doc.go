// Package deptest holds the test that enforces the package dependency rules
// of the design: which claw packages may import which, and which standard
// packages are off limits (an agent never runs a process itself; the gate
// never touches the network), and the test that bounds the length of every
// function of the broker, audit and agent packages (maxFuncLines). It has
// no code of its own.
package deptest
