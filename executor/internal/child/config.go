// Package child is the code that runs inside the sandboxed child process:
// it confines the process it runs in (namespaces' mounts, rlimits,
// credentials, Landlock, seccomp) and then executes the command, and it
// holds the in-sandbox tool implementations. It does not use cgo, so the
// small helper binary that embeds it can be built static.
package child

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Entry points. The parent starts the child as
//
//	argv0 EntrySandbox            (config on fd 3, status on fd 4)
//
// or, to clone it into a new user namespace without forking its own
// (large) address space, starts the helper as a relay that does the clone
//
//	argv0 EntryRelay NS EntrySandbox …   (as above, plus the go-ahead on fd 5)
//
// and a tool runs as the sandboxed program
//
//	argv0 EntryTool NAME          (arguments as JSON on stdin)
const (
	EntrySandbox = "__sandbox"
	EntryRelay   = "__sandbox-relay"
	EntryTool    = "__sandbox-tool"
)

// ArgPrestarted follows EntrySandbox when the child was started ahead of
// its action, to wait for its config.
const ArgPrestarted = "prestarted"

// ArgArmed follows ArgPrestarted when the child is an armed worker: it
// reads its Config as a frame (see WriteFrame) with Mode ModeArmed,
// confines itself, reports "ready", and only then reads its Request (the
// command, environment and directory of one action) as a second frame on
// the same descriptor, and after it the byte RequestGo. It parses the
// request as soon as it comes, but looks up the command, enters the
// directory and runs the action only once RequestGo follows: the parent
// may hand it the request while it still makes its record of the action
// durable. It runs that one action and exits like any child.
const ArgArmed = "armed"

// RequestGo follows an armed worker's Request: the action may run.
const RequestGo = 'g'

// ArgRelayed is appended to the child's arguments by the relay that
// cloned it: the child then has a life pipe on LifeFD.
const ArgRelayed = "relayed"

// ArgCgroup, in the relay's arguments (see Relay), precedes a job cgroup
// directory the relay joins before it clones the child.
const ArgCgroup = "cgroup"

// File descriptors the parent hands the child.
const (
	ConfigFD = 3 // the Config (MarshalConfig), then EOF
	StatusFD = 4 // status lines written by the child, closed on exec
	GoFD     = 5 // the relay's go-ahead: one byte once it is in its cgroup
	// LifeFD, in a child the relay cloned, is the read end of a pipe whose
	// only write end the relay holds: it hangs up when the relay dies.
	LifeFD = 5
	// EgressFD, in a child with an egress port, is a unix socket on which
	// it sends the parent its listener (SCM_RIGHTS), then closes.
	EgressFD = 6
)

// MaxConfigBytes bounds the config the child reads.
const MaxConfigBytes = 4 << 20

// Modes of the child.
const (
	ModeExec  = "exec"  // confine, then exec Argv
	ModeProbe = "probe" // run the namespace and mount steps, report, exit 0
	ModeArmed = "armed" // confine, report ready, then wait for a Request
)

// Config is what the parent tells the child to do. It is built by the
// executor from a Spec; the child trusts it (it comes from the parent over
// a private pipe) but still decodes it strictly.
type Config struct {
	Mode string   `json:"mode"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`

	// Exe, when set, is the program to execute (a tool's binary): it is
	// made readable and executable in the domain, and Argv[0] is kept.
	Exe string `json:"exe,omitempty"`

	RO []string `json:"ro,omitempty"` // read and execute
	RW []string `json:"rw,omitempty"` // read, write, create, remove; no devices
	// Protect are paths below RW kept read-only by a bind mount (with
	// MountNS); absent ones are skipped.
	Protect []string `json:"protect,omitempty"`
	Dev     []string `json:"dev,omitempty"` // device files: read and write only

	Net      bool     `json:"net,omitempty"`       // network granted (TCP ports below)
	TCPPorts []uint16 `json:"tcp_ports,omitempty"` // connect allowed
	UDPPorts []uint16 `json:"udp_ports,omitempty"` // connect/send allowed (Landlock ABI 10+)
	// EgressPort, in a new network namespace, is where the child listens
	// for the egress proxy (see EgressFD); TCPPorts then holds only it.
	EgressPort uint16 `json:"egress_port,omitempty"`

	MinABI   int  `json:"min_abi"`
	Degraded bool `json:"degraded,omitempty"`

	MountNS   bool `json:"mount_ns,omitempty"`   // in a private mount namespace: remount read-only
	MountProc bool `json:"mount_proc,omitempty"` // in a PID namespace: mount a fresh /proc
	// Hostname, in a UTS namespace of the child's own, is the name it
	// sets, so the host's stays unseen.
	Hostname string `json:"hostname,omitempty"`
	// Cgroups are the v1 job cgroup directories the child joins itself,
	// first thing: it moves its own thread, the one that starts the
	// command (see joinCgroups). Empty when the parent moved it.
	Cgroups []string `json:"cgroups,omitempty"`
	// CgroupNS: make a cgroup namespace, rooted at the cgroup the child
	// is in by now (its job cgroup, which the parent moved it into before
	// sending the config, or which it joined), so no cgroup path above it
	// is seen.
	CgroupNS bool `json:"cgroup_ns,omitempty"`

	UID    int      `json:"uid"` // -1: keep
	GID    int      `json:"gid"`
	Limits []Rlimit `json:"rlimits,omitempty"`

	BPF []byte `json:"bpf,omitempty"` // seccomp program (struct sock_filter array)

	// InProcess runs the tool (Argv[2]) in the child itself, once every
	// thread of it is confined, instead of executing Exe. Only a cgo-free
	// child can confine all its threads; one that cannot fails closed.
	InProcess bool `json:"in_process,omitempty"`

	Path string `json:"-"` // resolved program, set by the child
}

// Rlimit is one resource limit; soft and hard are set to Max, or to the
// inherited hard limit when that is lower (never raised).
type Rlimit struct {
	Resource int    `json:"resource"`
	Max      uint64 `json:"max"`
}

// Status is one line the child writes on the status fd.
type Status struct {
	Stage string `json:"stage"`           // "ready" before exec, "exit" after the command, or the failing step ("start": the relay could not clone the child)
	Code  int    `json:"code,omitempty"`  // 126 setup failed, 127 not found
	Err   string `json:"err,omitempty"`   // what failed
	ABI   int    `json:"abi,omitempty"`   // Landlock ABI enforced (0: none)
	Proc  bool   `json:"proc,omitempty"`  // fresh /proc mounted
	Mount bool   `json:"mount,omitempty"` // read-only remount done
	Caps  bool   `json:"caps,omitempty"`  // capabilities dropped
	UID   int    `json:"uid"`             // uid the command runs as
	// With Stage "exit" (the child stayed PID 1 and ran the command):
	Exit   int `json:"exit,omitempty"`
	Signal int `json:"signal,omitempty"`
	// Alone: init was the only process left in the PID namespace, so
	// the action is over; otherwise the parent waits for init's exit
	// (which kills the rest).
	Alone bool `json:"alone,omitempty"`
}

// DecodeConfig reads one Config from r, bounded and strict.
func DecodeConfig(r io.Reader) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("failed to read sandbox config: %w", err)
	}
	if len(data) > MaxConfigBytes {
		return nil, errors.New("sandbox config too large")
	}
	return ParseConfig(data)
}

// ParseConfig decodes (see MarshalConfig) and validates a Config.
func ParseConfig(data []byte) (*Config, error) {
	c, err := unmarshalConfig(data)
	if err != nil {
		return nil, fmt.Errorf("malformed sandbox config: %w", err)
	}
	switch c.Mode {
	case ModeExec:
		if len(c.Argv) == 0 || c.Argv[0] == "" {
			return nil, errors.New("sandbox config: empty argv")
		}
	case ModeProbe:
	case ModeArmed:
		if len(c.Argv) != 0 || len(c.Env) != 0 || c.Dir != "" {
			return nil, errors.New("sandbox config: an armed worker gets its command in its request")
		}
		if c.InProcess && c.Exe == "" {
			return nil, errors.New("sandbox config: in_process needs the tool's program")
		}
	default:
		return nil, fmt.Errorf("sandbox config: unknown mode %q", c.Mode)
	}
	if c.InProcess && c.Mode != ModeArmed && !toolArgv(c.Argv) {
		return nil, errors.New("sandbox config: in_process needs argv [program, " + EntryTool + ", TOOL]")
	}
	if c.InProcess && len(c.Cgroups) > 0 {
		return nil, errors.New("sandbox config: a tool run in process runs on every thread; the parent moves it into its cgroups")
	}
	if len(c.BPF)%8 != 0 || len(c.BPF)/8 > 0xffff {
		return nil, errors.New("sandbox config: malformed seccomp program")
	}
	for _, p := range slices.Concat(c.RO, c.RW, c.Dev, c.Protect, c.Cgroups) {
		if len(p) == 0 || p[0] != '/' {
			return nil, fmt.Errorf("sandbox config: path %q is not absolute", p)
		}
	}
	if c.Exe != "" && c.Exe[0] != '/' {
		return nil, fmt.Errorf("sandbox config: exe %q is not absolute", c.Exe)
	}
	if c.Dir != "" && c.Dir[0] != '/' {
		return nil, fmt.Errorf("sandbox config: cwd %q is not absolute", c.Dir)
	}
	return c, nil
}

func toolArgv(argv []string) bool { return len(argv) == 3 && argv[1] == EntryTool && argv[2] != "" }

// Request is what an armed worker is given once it is confined: the one
// action it runs. Nothing in it widens the confinement: the program is
// looked up and the directory entered under the worker's Landlock domain
// and seccomp filter.
type Request struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
}

// Apply makes c, an armed worker's config, the config of the action r:
// a worker that holds a tool's program (Exe) runs only that tool, and one
// that runs the tool in process only a tool argv.
func (c *Config) Apply(r *Request) error {
	if len(r.Argv) == 0 || r.Argv[0] == "" {
		return errors.New("request: empty argv")
	}
	if r.Dir != "" && r.Dir[0] != '/' {
		return fmt.Errorf("request: cwd %q is not absolute", r.Dir)
	}
	if c.Exe != "" && !toolArgv(r.Argv) {
		return errors.New("request: a tool worker runs only its tool")
	}
	c.Mode, c.Argv, c.Env, c.Dir = ModeExec, r.Argv, r.Env, r.Dir
	return nil
}

// WriteFrame writes one frame: the length of data (4 bytes, big endian),
// then data.
func WriteFrame(w io.Writer, data []byte) error {
	if len(data) > MaxConfigBytes {
		return errors.New("sandbox frame too large")
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	_, err := w.Write(append(n[:], data...))
	return err
}

// ReadFrame reads one frame written by WriteFrame, at most MaxConfigBytes.
func ReadFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, fmt.Errorf("failed to read sandbox frame: %w", err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > MaxConfigBytes {
		return nil, errors.New("sandbox frame too large")
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("failed to read sandbox frame: %w", err)
	}
	return data, nil
}

// ParseRequest decodes a Request strictly.
func ParseRequest(data []byte) (*Request, error) {
	dec := json.NewDecoder(bytesReader(data))
	dec.DisallowUnknownFields()
	var r Request
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("malformed sandbox request: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("malformed sandbox request: trailing data")
	}
	return &r, nil
}
