package egress

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// request is one proxy request head, parsed and canonical.
type request struct {
	method  string
	connect bool
	host    string // lower case, no trailing dot; an address in canonical form
	ip      netip.Addr
	port    uint16
	path    string   // plain HTTP: origin-form target ("/p?q")
	proto   string   // HTTP/1.0 or HTTP/1.1
	headers []string // plain HTTP: "Name: value" lines, in order
}

// authority is host:port as the allowlist keys it.
func (r *request) authority() string { return authority(r.host, r.port) }

func authority(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// errHeadTooLarge is a request head over the size cap.
var errHeadTooLarge = errors.New("request head too large")

// readHead reads a request head (through its empty line) of at most max
// bytes.
func readHead(br *bufio.Reader, max int) ([]byte, error) {
	var head []byte
	for {
		line, err := br.ReadSlice('\n')
		if len(head)+len(line) > max || errors.Is(err, bufio.ErrBufferFull) {
			return nil, errHeadTooLarge
		}
		head = append(head, line...)
		if err != nil {
			return nil, err
		}
		if len(line) <= 2 && strings.TrimRight(string(line), "\r\n") == "" {
			return head, nil
		}
	}
}

// plainMethods are the methods forwarded as plain HTTP.
var plainMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true, "PATCH": true, "OPTIONS": true}

// statusError is a request refused before it reached the allowlist: the
// HTTP status to answer and why.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &statusError{400, fmt.Sprintf(format, a...)}
}

// parseRequest parses a request head: "CONNECT host:port HTTP/1.x" or an
// absolute-form "METHOD http://host[:port]/path HTTP/1.x", then header
// lines, then an empty line. Anything else is refused: origin-form and
// https:// targets, user information, fragments, bare CR, control
// characters, folded or malformed headers, and a Host header that names
// another authority than the target.
func parseRequest(head []byte) (*request, error) {
	text, ok := bytes.CutSuffix(head, []byte("\n"))
	if !ok {
		return nil, badRequest("request head does not end with a line")
	}
	lines := strings.Split(string(text), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
		for _, c := range []byte(lines[i]) {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return nil, badRequest("control character in the request head")
			}
		}
	}
	if lines[len(lines)-1] != "" {
		return nil, badRequest("request head does not end with an empty line")
	}
	lines = lines[:len(lines)-1]
	if len(lines) == 0 {
		return nil, badRequest("empty request")
	}
	parts := strings.Split(lines[0], " ")
	if len(parts) != 3 {
		return nil, badRequest("malformed request line")
	}
	r := &request{method: parts[0], proto: parts[2]}
	if r.proto != "HTTP/1.1" && r.proto != "HTTP/1.0" {
		return nil, badRequest("unsupported protocol %q", r.proto)
	}
	if !isToken(r.method) {
		return nil, badRequest("malformed method")
	}
	var hostHeader []string
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok || !isToken(name) {
			return nil, badRequest("malformed header line")
		}
		value = strings.Trim(value, " \t")
		if strings.EqualFold(name, "Host") {
			hostHeader = append(hostHeader, value)
		}
		r.headers = append(r.headers, name+": "+value)
	}
	if len(hostHeader) > 1 {
		return nil, badRequest("more than one Host header")
	}
	target := parts[1]
	if r.method == "CONNECT" {
		r.connect = true
		if err := r.setAuthority(target, 0); err != nil {
			return nil, err
		}
		r.headers = nil // nothing of a CONNECT head is forwarded
		return r, nil
	}
	if !plainMethods[r.method] {
		return nil, &statusError{405, "method " + r.method + " is not proxied"}
	}
	scheme, rest, ok := strings.Cut(target, "://")
	switch {
	case !ok:
		return nil, badRequest("the target is not an absolute http:// url")
	case strings.EqualFold(scheme, "https"):
		return nil, badRequest("https goes through CONNECT, not an absolute https:// url")
	case !strings.EqualFold(scheme, "http"):
		return nil, badRequest("scheme %q is not proxied", scheme)
	case strings.ContainsAny(rest, "#\\"):
		return nil, badRequest("the url has a fragment or a backslash")
	}
	auth, path := rest, "/"
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		auth, path = rest[:i], rest[i:]
		if path[0] == '?' {
			path = "/" + path
		}
	}
	if err := r.setAuthority(auth, 80); err != nil {
		return nil, err
	}
	r.path = path
	if len(hostHeader) == 1 {
		h := &request{}
		if err := h.setAuthority(hostHeader[0], 80); err != nil || h.host != r.host || h.port != r.port {
			return nil, badRequest("the Host header does not name the url's host")
		}
	} else if r.proto == "HTTP/1.1" {
		return nil, badRequest("no Host header")
	}
	return r, nil
}

// setAuthority parses host[:port] (the port is required when defPort is
// 0) into the canonical host and port.
func (r *request) setAuthority(a string, defPort uint16) error {
	if strings.Contains(a, "@") {
		return badRequest("user information in the target")
	}
	host, port, hasPort := a, "", false
	if i := strings.LastIndexByte(a, ':'); i >= 0 && !strings.HasSuffix(a, "]") {
		host, port, hasPort = a[:i], a[i+1:], true
	}
	if strings.Contains(host, ":") && !(strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")) {
		return badRequest("malformed authority %q", a)
	}
	switch {
	case !hasPort && defPort != 0:
		r.port = defPort
	case port == "":
		return badRequest("no port in %q", a)
	default:
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 || !allDigits(port) {
			return badRequest("invalid port %q", port)
		}
		r.port = uint16(n)
	}
	h, ip, err := canonHost(host)
	if err != nil {
		return badRequest("%v", err)
	}
	r.host, r.ip = h, ip
	return nil
}

// canonHost returns a host in the one form the allowlist is keyed by: a
// DNS name in lower case without its trailing dot, or an address in its
// canonical form (an IPv4-mapped IPv6 address as IPv4). Spellings a
// resolver might read as an address (2130706433, 0x7f000001, 127.1) are
// refused rather than guessed, as are non-ASCII names and zones.
func canonHost(h string) (string, netip.Addr, error) {
	if strings.HasPrefix(h, "[") {
		inner, ok := strings.CutSuffix(h[1:], "]")
		a, err := netip.ParseAddr(inner)
		if !ok || err != nil || !a.Is6() || a.Zone() != "" {
			return "", netip.Addr{}, fmt.Errorf("malformed IPv6 address %q", h)
		}
		a = a.Unmap()
		return a.String(), a, nil
	}
	if a, err := netip.ParseAddr(h); err == nil && a.Is4() {
		return a.String(), a, nil
	}
	name := strings.TrimSuffix(strings.ToLower(h), ".")
	if name == "" || len(name) > 253 {
		return "", netip.Addr{}, fmt.Errorf("invalid host name %q", h)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", netip.Addr{}, fmt.Errorf("invalid host name %q", h)
		}
		for _, c := range []byte(l) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", netip.Addr{}, fmt.Errorf("invalid host name %q", h)
			}
		}
	}
	last := labels[len(labels)-1]
	if allDigits(last) || strings.HasPrefix(last, "0x") {
		return "", netip.Addr{}, fmt.Errorf("host %q is an address in a non-canonical notation", h)
	}
	return name, netip.Addr{}, nil
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
