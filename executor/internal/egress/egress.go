// Package egress is the HTTP proxy through which a sandboxed command
// reaches the network: the only way out of its network namespace. It
// admits the host:port destinations of that action's grant and nothing
// else, resolves names itself, connects only to the addresses it vetted,
// and keeps a record of every connection for the action's receipt.
//
// It serves HTTP CONNECT (the tunnel must start with a TLS ClientHello
// whose server name is the CONNECT host) and absolute-form plain HTTP
// ("GET http://host/path", forwarded with Connection: close). The grant
// is checked before any name is resolved, so a refused name never leaves
// the machine as a DNS query. Every address a name resolves to must be
// public, or inside a prefix of the grant's private allowlist; the
// connection goes to the vetted address, never to the name again, so a
// rebinding resolver cannot switch it. A refusal answers 403 with the
// reason in the status text and an X-Claw-Egress header.
package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of a Config's zero fields.
const (
	DefaultIdleTimeout    = 60 * time.Second
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	DefaultMaxHeaderBytes = 16 << 10
	DefaultMaxBytes       = 1 << 30
	DefaultMaxConns       = 32
	// MaxRecords is how many connections are recorded one by one; past it
	// they are only counted.
	MaxRecords = 256
)

// Resolver resolves names (net.DefaultResolver is one).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is one action's proxy.
type Config struct {
	// Hosts are the destinations the action may reach, "host:port"
	// ("[v6]:port" for an IPv6 address).
	Hosts []string
	// AllowPrivate are the non-public prefixes the proxy may connect to
	// (an internal mirror).
	AllowPrivate []netip.Prefix
	// Resolver resolves names; nil is net.DefaultResolver.
	Resolver Resolver
	// IdleTimeout closes a connection with no byte in either direction
	// for that long.
	IdleTimeout time.Duration
	// HeaderTimeout bounds reading a request head and the TLS
	// ClientHello that follows a CONNECT.
	HeaderTimeout  time.Duration
	DialTimeout    time.Duration
	MaxHeaderBytes int
	// MaxBytes caps the bytes of all connections together, both ways;
	// the connection that crosses it is closed.
	MaxBytes int64
	// MaxConns caps the connections open at once.
	MaxConns int
}

// Record is what happened to one connection to the proxy.
type Record struct {
	Method   string `json:"method,omitempty"` // CONNECT, GET, …
	Host     string `json:"host,omitempty"`
	Port     uint16 `json:"port,omitempty"`
	IP       string `json:"ip,omitempty"` // the address connected to
	Admitted bool   `json:"admitted"`
	Reason   string `json:"reason,omitempty"` // why it was refused
	Up       int64  `json:"bytes_up"`         // from the sandbox
	Down     int64  `json:"bytes_down"`       // to the sandbox
	MS       int64  `json:"ms"`
	// Close is how an admitted connection ended: eof (both sides done),
	// idle, cap (the byte cap), end (the action ended), error.
	Close string `json:"close,omitempty"`
}

// Report is every connection of one action.
type Report struct {
	Conns   []Record `json:"conns"`
	Dropped int      `json:"dropped,omitempty"` // connections past MaxRecords, not itemised
}

// Proxy serves one action's listener.
type Proxy struct {
	cfg   Config
	hosts map[string]bool
	used  atomic.Int64 // bytes both ways, all connections
	conns atomic.Int32 // open now

	mu      sync.Mutex
	closed  bool
	open    map[net.Conn]struct{}
	report  Report
	wg      sync.WaitGroup
	ln      net.Listener
	served  chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	started bool
}

// New checks the grant and makes a proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.IdleTimeout, DefaultIdleTimeout)
	def(&cfg.HeaderTimeout, DefaultHeaderTimeout)
	def(&cfg.DialTimeout, DefaultDialTimeout)
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	p := &Proxy{cfg: cfg, hosts: map[string]bool{}, open: map[net.Conn]struct{}{}, served: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for _, h := range cfg.Hosts {
		key, err := CanonicalHostPort(h)
		if err != nil {
			return nil, err
		}
		p.hosts[key] = true
	}
	if len(p.hosts) == 0 {
		return nil, errors.New("egress: no hosts granted")
	}
	return p, nil
}

// CanonicalHostPort returns host:port in the form the proxy compares
// destinations in, or why it cannot be one.
func CanonicalHostPort(hp string) (string, error) {
	var r request
	if err := r.setAuthority(hp, 0); err != nil {
		return "", fmt.Errorf("egress: host %q: %w", hp, err)
	}
	return r.authority(), nil
}

// Serve accepts connections on l until Close. It takes l over.
func (p *Proxy) Serve(l net.Listener) {
	p.mu.Lock()
	if p.closed || p.started {
		p.mu.Unlock()
		l.Close()
		return
	}
	p.ln, p.started = l, true
	p.mu.Unlock()
	defer close(p.served)
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if !p.track(c) {
			c.Close()
			return
		}
		go p.handle(c)
	}
}

// track registers an open connection; false once the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.open[c] = struct{}{}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(c net.Conn, r Record) {
	p.mu.Lock()
	delete(p.open, c)
	if len(p.report.Conns) < MaxRecords {
		p.report.Conns = append(p.report.Conns, r)
	} else {
		p.report.Dropped++
	}
	p.mu.Unlock()
	p.wg.Done()
}

// Close stops accepting, closes every connection (their records say
// close "end"), and returns the report of every connection the proxy had.
func (p *Proxy) Close() Report {
	p.mu.Lock()
	p.closed = true
	p.cancel()
	if p.ln != nil {
		p.ln.Close()
	}
	for c := range p.open {
		c.Close()
	}
	started := p.started
	p.mu.Unlock()
	if started {
		<-p.served
	}
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return Report{Conns: append([]Record(nil), p.report.Conns...), Dropped: p.report.Dropped}
}

// handle serves one connection from the sandbox.
func (p *Proxy) handle(c net.Conn) {
	start := time.Now()
	rec := Record{}
	defer func() {
		rec.MS = time.Since(start).Milliseconds()
		c.Close()
		p.untrack(c, rec)
	}()
	if n := p.conns.Add(1); n > int32(p.cfg.MaxConns) {
		p.conns.Add(-1)
		rec.Reason = fmt.Sprintf("more than %d connections at once", p.cfg.MaxConns)
		refuse(c, 403, rec.Reason, false)
		return
	}
	defer p.conns.Add(-1)

	c.SetReadDeadline(start.Add(p.cfg.HeaderTimeout))
	br := bufio.NewReaderSize(c, 4096)
	head, err := readHead(br, p.cfg.MaxHeaderBytes)
	if err != nil {
		rec.Reason = "reading the request: " + err.Error()
		if errors.Is(err, errHeadTooLarge) {
			refuse(c, 431, rec.Reason, false)
		} else {
			refuse(c, 400, rec.Reason, false)
		}
		return
	}
	req, err := parseRequest(head)
	if err != nil {
		rec.Reason = err.Error()
		code := 400
		var se *statusError
		if errors.As(err, &se) {
			code = se.code
		}
		refuse(c, code, rec.Reason, false)
		return
	}
	rec.Method, rec.Host, rec.Port = req.method, req.host, req.port
	up, ip, err := p.connect(req)
	if err != nil {
		rec.Reason = err.Error()
		code := 403
		var se *statusError
		if errors.As(err, &se) {
			code = se.code
		}
		refuse(c, code, rec.Reason, !req.connect)
		return
	}
	rec.IP = ip.String()
	p.mu.Lock()
	p.open[up] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.open, up)
		p.mu.Unlock()
		up.Close()
	}()
	if p.closing() {
		rec.Reason, rec.Close = "the action ended", "end"
		return
	}

	var first []byte // what goes upstream before the splice
	if req.connect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			rec.Reason = "answering CONNECT: " + err.Error()
			return
		}
		sni, err := clientHelloSNI(br)
		switch {
		case err != nil:
			rec.Reason = "reading the TLS ClientHello: " + err.Error()
			return
		case sni == "" && !req.ip.IsValid():
			rec.Reason = "the TLS ClientHello names no server; the CONNECT host was " + req.host
			return
		case sni != "" && canonSNI(sni) != req.host:
			rec.Reason = fmt.Sprintf("the TLS server name %q is not the CONNECT host %s", sni, req.host)
			return
		}
	} else {
		first = forwardHead(req)
	}
	c.SetReadDeadline(time.Time{})
	rec.Admitted = true
	rec.Up, rec.Down, rec.Close = p.splice(c, br, up, first)
}

func (p *Proxy) closing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// canonSNI is a TLS server name in the form of a canonical host.
func canonSNI(s string) string { return strings.TrimSuffix(strings.ToLower(s), ".") }

// connect admits the request's destination and connects to a vetted
// address of it: the grant first (no lookup for a refused name), then the
// resolution, then every address against the public or allowed ones.
func (p *Proxy) connect(req *request) (net.Conn, netip.Addr, error) {
	if !p.hosts[req.authority()] {
		return nil, netip.Addr{}, fmt.Errorf("%s is not in this action's plan", req.authority())
	}
	var addrs []netip.Addr
	if req.ip.IsValid() {
		addrs = []netip.Addr{req.ip}
	} else {
		ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
		found, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", req.host)
		cancel()
		if err != nil {
			return nil, netip.Addr{}, &statusError{502, "resolving " + req.host + ": " + errText(err)}
		}
		addrs = found
	}
	var refused error
	var vetted []netip.Addr
	for _, a := range addrs {
		a = a.Unmap().WithZone("")
		if err := vet(a, p.cfg.AllowPrivate); err != nil {
			refused = cmpOr(refused, err)
			continue
		}
		vetted = append(vetted, a)
	}
	if len(vetted) == 0 {
		if refused == nil {
			refused = errors.New("no address")
		}
		return nil, netip.Addr{}, fmt.Errorf("%s: %w", req.host, refused)
	}
	var last error
	for _, a := range vetted {
		d := net.Dialer{Timeout: p.cfg.DialTimeout}
		c, err := d.DialContext(p.ctx, "tcp", netip.AddrPortFrom(a, req.port).String())
		if err == nil {
			return c, a, nil
		}
		last = err
	}
	return nil, netip.Addr{}, &statusError{502, "connecting to " + req.authority() + ": " + errText(last)}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// errText is an error's text without the addresses Go's net errors
// repeat.
func errText(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return de.Err
	}
	return err.Error()
}

// hopHeaders are not forwarded: they concern the hop to the proxy (as
// does every Proxy-* header).
var hopHeaders = map[string]bool{"connection": true, "proxy-connection": true, "keep-alive": true,
	"proxy-authorization": true, "proxy-authenticate": true, "te": true, "trailer": true, "upgrade": true}

// forwardHead is the plain HTTP request head as sent upstream: origin
// form, the client's headers less the hop-by-hop ones, and
// Connection: close, so that every request is a connection of its own and
// is admitted on its own.
func forwardHead(r *request) []byte {
	var b strings.Builder
	b.WriteString(r.method + " " + r.path + " " + r.proto + "\r\n")
	named := map[string]bool{}
	for _, h := range r.headers {
		name, value, _ := strings.Cut(h, ":")
		if strings.EqualFold(name, "Connection") {
			for _, n := range strings.Split(value, ",") {
				named[strings.ToLower(strings.TrimSpace(n))] = true
			}
		}
	}
	host := false
	for _, h := range r.headers {
		name, _, _ := strings.Cut(h, ":")
		n := strings.ToLower(name)
		if hopHeaders[n] || named[n] || strings.HasPrefix(n, "proxy-") {
			continue
		}
		host = host || n == "host"
		b.WriteString(h + "\r\n")
	}
	if !host {
		b.WriteString("Host: " + r.authority() + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	return []byte(b.String())
}

// refuse answers a refused request. The reason goes in the status text
// and the X-Claw-Egress header, and for plain HTTP in the body too (git
// prints it).
func refuse(c net.Conn, code int, reason string, body bool) {
	reason = printable(reason)
	text := "claw egress: " + reason
	msg := ""
	if body {
		msg = text + "\n"
	}
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nX-Claw-Egress: refused; %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, text, reason, len(msg), msg)
}

// printable keeps a reason on one line of printable ASCII.
func printable(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c >= 0x7f {
			b[i] = '?'
		}
	}
	if len(b) > 300 {
		b = append(b[:297], "..."...)
	}
	return string(b)
}

// splice copies both ways until both are done, the connection is idle,
// the byte cap is crossed or the proxy closes, and returns the bytes
// forwarded each way and why it ended.
func (p *Proxy) splice(c net.Conn, cr io.Reader, up net.Conn, first []byte) (upBytes, downBytes int64, cause string) {
	t := &tunnel{p: p, a: c, b: up}
	t.touch()
	if len(first) > 0 {
		if !t.charge(len(first)) {
			t.end("cap")
		} else if _, err := up.Write(first); err != nil {
			t.end("error")
		} else {
			t.up.Add(int64(len(first)))
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); t.copy(up, c, cr, &t.up) }()
	go func() { defer wg.Done(); t.copy(c, up, up, &t.down) }()
	wg.Wait()
	t.end("eof")
	if p.closing() && t.cause == "error" {
		t.cause = "end"
	}
	return t.up.Load(), t.down.Load(), t.cause
}

type tunnel struct {
	p        *Proxy
	a, b     net.Conn
	up, down atomic.Int64
	last     atomic.Int64 // unix nanoseconds of the last byte either way

	once  sync.Once
	cause string
}

func (t *tunnel) touch() { t.last.Store(time.Now().UnixNano()) }

// charge counts n bytes against the proxy's cap; false when it is crossed.
func (t *tunnel) charge(n int) bool {
	return t.p.used.Add(int64(n)) <= t.p.cfg.MaxBytes
}

// end closes both sides once, for the first reason given.
func (t *tunnel) end(cause string) {
	t.once.Do(func() {
		if t.p.closing() {
			cause = "end"
		}
		t.cause = cause
		t.a.Close()
		t.b.Close()
	})
}

type closeWriter interface{ CloseWrite() error }

// copy forwards from src (read through r) to dst, counting into n.
func (t *tunnel) copy(dst, src net.Conn, r io.Reader, n *atomic.Int64) {
	idle := t.p.cfg.IdleTimeout
	buf := make([]byte, 32<<10)
	for {
		src.SetReadDeadline(time.Now().Add(idle))
		k, err := r.Read(buf)
		if k > 0 {
			t.touch()
			if !t.charge(k) {
				t.end("cap")
				return
			}
			dst.SetWriteDeadline(time.Now().Add(idle))
			if _, werr := dst.Write(buf[:k]); werr != nil {
				t.end("error")
				return
			}
			n.Add(int64(k))
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if cw, ok := dst.(closeWriter); ok {
				cw.CloseWrite()
				return
			}
			t.end("eof")
			return
		case isTimeout(err):
			if time.Since(time.Unix(0, t.last.Load())) < idle {
				continue // the other way is busy
			}
			t.end("idle")
			return
		default:
			t.end("error")
			return
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// String is a one-line summary of a record, for logs and tests.
func (r Record) String() string {
	s := r.Method + " " + authority(r.Host, r.Port)
	if r.Admitted {
		return s + " -> " + r.IP + " up=" + strconv.FormatInt(r.Up, 10) + " down=" + strconv.FormatInt(r.Down, 10) + " close=" + r.Close
	}
	return s + " refused: " + r.Reason
}
