package egress

import (
	"bufio"
	"errors"
)

// clientHelloSNI reads, without consuming it, the TLS ClientHello at the
// start of br and returns the host name its server_name extension asks
// for ("" when it has none). It fails when the stream does not start with
// a ClientHello that fits in one TLS record, or when the ClientHello is
// malformed.
func clientHelloSNI(br *bufio.Reader) (string, error) {
	const headerLen = 5
	hdr, err := br.Peek(headerLen)
	if err != nil {
		return "", err
	}
	if hdr[0] != 0x16 { // handshake record
		return "", errors.New("the tunnel does not start with a TLS ClientHello")
	}
	n := int(hdr[3])<<8 | int(hdr[4])
	rec, err := br.Peek(headerLen + n)
	if err != nil {
		return "", err
	}
	return helloServerName(rec[headerLen:])
}

var errHello = errors.New("malformed TLS ClientHello")

// helloServerName parses a ClientHello handshake message (RFC 8446 4.1.2,
// RFC 6066 3) for its host_name.
func helloServerName(msg []byte) (string, error) {
	r := reader(msg)
	typ, _ := r.u8()
	body, ok := r.vec(3)
	if typ != 1 || !ok {
		return "", errHello
	}
	b := reader(body)
	if _, ok := b.bytes(2 + 32); !ok { // legacy_version, random
		return "", errHello
	}
	for _, lenBytes := range []int{1, 2, 1} { // session id, cipher suites, compression
		if _, ok := b.vec(lenBytes); !ok {
			return "", errHello
		}
	}
	if len(b) == 0 {
		return "", nil // no extensions
	}
	exts, ok := b.vec(2)
	if !ok || len(b) != 0 {
		return "", errHello
	}
	e := reader(exts)
	name := ""
	for len(e) > 0 {
		typ, ok1 := e.u16()
		data, ok2 := e.vec(2)
		if !ok1 || !ok2 {
			return "", errHello
		}
		if typ != 0 { // server_name
			continue
		}
		if name != "" {
			return "", errHello
		}
		d := reader(data)
		list, ok := d.vec(2)
		if !ok || len(d) != 0 {
			return "", errHello
		}
		l := reader(list)
		for len(l) > 0 {
			kind, ok1 := l.u8()
			host, ok2 := l.vec(2)
			if !ok1 || !ok2 || len(host) == 0 {
				return "", errHello
			}
			if kind == 0 { // host_name
				if name != "" {
					return "", errHello
				}
				for _, c := range host {
					if c <= ' ' || c >= 0x7f {
						return "", errHello
					}
				}
				name = string(host)
			}
		}
	}
	return name, nil
}

// reader reads big-endian fields from a byte string.
type reader []byte

func (r *reader) bytes(n int) ([]byte, bool) {
	if n < 0 || len(*r) < n {
		return nil, false
	}
	b := (*r)[:n]
	*r = (*r)[n:]
	return b, true
}

func (r *reader) u8() (byte, bool) {
	b, ok := r.bytes(1)
	if !ok {
		return 0, false
	}
	return b[0], true
}

func (r *reader) u16() (int, bool) {
	b, ok := r.bytes(2)
	if !ok {
		return 0, false
	}
	return int(b[0])<<8 | int(b[1]), true
}

// vec reads a vector whose length takes lenBytes bytes.
func (r *reader) vec(lenBytes int) ([]byte, bool) {
	lb, ok := r.bytes(lenBytes)
	if !ok {
		return nil, false
	}
	n := 0
	for _, c := range lb {
		n = n<<8 | int(c)
	}
	return r.bytes(n)
}
