package child

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// The Config travels from the parent to the child in a binary form of
// its own, not JSON: the child is a new process for every action, and
// JSON's decoder spends most of its time there building its reflection
// caches, about a quarter of a millisecond on the action's path (the
// parent's first encoding as much again).
//
// The form is configMagic, then every field of Config in the order of the
// struct, each once: a string or a byte string as its length (uvarint)
// and its bytes; a list as its count (uvarint) and its items; a bool as
// one byte, 0 or 1; an unsigned number as a uvarint, a signed one as a
// varint (both in their shortest form); an Rlimit as its resource and its
// max. Nothing may follow. A string holds no NUL byte (no path, argument
// or variable the kernel takes can), and a number fits its field. So a
// config has one encoding, and MarshalConfig of what ParseConfig accepted
// gives back the same bytes.

// configMagic starts every encoded Config; a helper from another build of
// claw, which would read the fields (or an armed worker's request and
// its go-ahead) otherwise, refuses it.
const configMagic = "claw-config-4\n"

// MarshalConfig encodes c for ParseConfig.
func MarshalConfig(c *Config) []byte {
	b := make([]byte, 0, 4096)
	b = append(b, configMagic...)
	b = putString(b, c.Mode)
	b = putStrings(b, c.Argv)
	b = putStrings(b, c.Env)
	b = putString(b, c.Dir)
	b = putString(b, c.Exe)
	b = putStrings(b, c.RO)
	b = putStrings(b, c.RW)
	b = putStrings(b, c.Protect)
	b = putStrings(b, c.Dev)
	b = putBool(b, c.Net)
	b = putPorts(b, c.TCPPorts)
	b = putPorts(b, c.UDPPorts)
	b = binary.AppendUvarint(b, uint64(c.EgressPort))
	b = binary.AppendVarint(b, int64(c.MinABI))
	b = putBool(b, c.Degraded)
	b = putBool(b, c.MountNS)
	b = putBool(b, c.MountProc)
	b = putString(b, c.Hostname)
	b = putStrings(b, c.Cgroups)
	b = putBool(b, c.CgroupNS)
	b = binary.AppendVarint(b, int64(c.UID))
	b = binary.AppendVarint(b, int64(c.GID))
	b = binary.AppendUvarint(b, uint64(len(c.Limits)))
	for _, l := range c.Limits {
		b = binary.AppendVarint(b, int64(l.Resource))
		b = binary.AppendUvarint(b, l.Max)
	}
	b = putString(b, string(c.BPF))
	b = putBool(b, c.InProcess)
	return b
}

func putString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func putStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = putString(b, s)
	}
	return b
}

func putPorts(b []byte, ps []uint16) []byte {
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p))
	}
	return b
}

func putBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// unmarshalConfig decodes what MarshalConfig encoded, strictly; it does
// not check what the fields say (ParseConfig does).
func unmarshalConfig(data []byte) (*Config, error) {
	rest, ok := strings.CutPrefix(string(data), configMagic)
	if !ok {
		return nil, errors.New("not a config of this claw build")
	}
	r := &wireReader{b: rest}
	c := &Config{}
	c.Mode = r.string("mode")
	c.Argv = r.strings("argv")
	c.Env = r.strings("env")
	c.Dir = r.string("dir")
	c.Exe = r.string("exe")
	c.RO = r.strings("ro")
	c.RW = r.strings("rw")
	c.Protect = r.strings("protect")
	c.Dev = r.strings("dev")
	c.Net = r.bool("net")
	c.TCPPorts = r.ports("tcp_ports")
	c.UDPPorts = r.ports("udp_ports")
	c.EgressPort = uint16(r.unsigned("egress_port", math.MaxUint16))
	c.MinABI = int(r.signed("min_abi", 0, math.MaxInt32))
	c.Degraded = r.bool("degraded")
	c.MountNS = r.bool("mount_ns")
	c.MountProc = r.bool("mount_proc")
	c.Hostname = r.string("hostname")
	c.Cgroups = r.strings("cgroups")
	c.CgroupNS = r.bool("cgroup_ns")
	c.UID = int(r.signed("uid", -1, math.MaxUint32-1))
	c.GID = int(r.signed("gid", -1, math.MaxUint32-1))
	if n := r.count("rlimits", 2); n > 0 {
		c.Limits = make([]Rlimit, n)
		for i := range c.Limits {
			c.Limits[i].Resource = int(r.signed("rlimits", 0, math.MaxInt32))
			c.Limits[i].Max = r.unsigned("rlimits", math.MaxUint64)
		}
	}
	if bpf := r.bytes("bpf"); bpf != "" {
		c.BPF = []byte(bpf)
	}
	c.InProcess = r.bool("in_process")
	if r.err == nil && len(r.b) > 0 {
		r.err = errors.New("trailing data")
	}
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}

// wireReader reads the fields of an encoded Config; after the first error
// it reads nothing more and every field is its zero value.
type wireReader struct {
	b   string
	err error
}

func (r *wireReader) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
	}
	r.b = ""
}

// unsigned reads a uvarint of at most max, in its shortest form.
func (r *wireReader) unsigned(field string, max uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint([]byte(r.b[:min(len(r.b), binary.MaxVarintLen64)]))
	switch {
	case n <= 0:
		r.fail(field, "truncated or overlong number")
		return 0
	case n != len(binary.AppendUvarint(nil, v)):
		r.fail(field, "number not in its shortest form")
		return 0
	case v > max:
		r.fail(field, "%d out of range", v)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// signed reads a varint (a zigzag-encoded uvarint) from lo to hi, in its
// shortest form.
func (r *wireReader) signed(field string, lo, hi int64) int64 {
	u := r.unsigned(field, math.MaxUint64)
	v := int64(u>>1) ^ -int64(u&1)
	if r.err == nil && (v < lo || v > hi) {
		r.fail(field, "%d out of range", v)
		return 0
	}
	return v
}

// count reads the length of a list whose items take at least size bytes
// each: one that could not fit in what is left is refused.
func (r *wireReader) count(field string, size int) int {
	n := r.unsigned(field, math.MaxUint32)
	if n > uint64(len(r.b)/size) {
		r.fail(field, "%d items cannot fit", n)
		return 0
	}
	return int(n)
}

func (r *wireReader) bool(field string) bool { return r.unsigned(field, 1) == 1 }

// bytes reads a byte string.
func (r *wireReader) bytes(field string) string {
	n := r.unsigned(field, math.MaxUint32)
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.fail(field, "truncated")
		return ""
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// string reads a byte string without a NUL byte.
func (r *wireReader) string(field string) string {
	s := r.bytes(field)
	if strings.IndexByte(s, 0) >= 0 {
		r.fail(field, "NUL byte")
		return ""
	}
	return s
}

func (r *wireReader) strings(field string) []string {
	return readList(r, field, func() string { return r.string(field) })
}

func (r *wireReader) ports(field string) []uint16 {
	return readList(r, field, func() uint16 { return uint16(r.unsigned(field, math.MaxUint16)) })
}

// readList reads a list of items of at least a byte each; an empty one
// is nil.
func readList[T any](r *wireReader, field string, item func() T) []T {
	n := r.count(field, 1)
	if r.err != nil || n == 0 {
		return nil
	}
	l := make([]T, n)
	for i := range l {
		l[i] = item()
	}
	return l
}
