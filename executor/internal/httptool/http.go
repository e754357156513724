// Package httptool is the in-sandbox http tool. It lives apart from the
// other tools so the small sandbox helper does not link net/http and
// crypto/tls: a tool the helper lacks runs in claw itself.
package httptool

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/clawsec/claw/executor/internal/child"
)

func init() {
	child.RegisterTool(child.ToolHTTP, func(args []byte) (any, error) {
		var a HTTPArgs
		if err := child.StrictJSON(args, &a); err != nil {
			return nil, err
		}
		return HTTP(a)
	})
}

// HTTP limits.
const (
	DefaultHTTPMax     = 1 << 20
	HardHTTPMax        = 8 << 20
	DefaultHTTPTimeout = 30 * time.Second
	MaxHTTPTimeout     = 5 * time.Minute
	maxRedirects       = 5
)

// HTTPArgs are the http tool's arguments.
type HTTPArgs struct {
	Method  string            `json:"method,omitempty"` // GET (default) or POST
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// AllowHosts is the host allowlist, in the forms of the gate's
	// allowed_domains (see [HostAllowed]); empty allows any host. The
	// integrator sets it, never the request's author.
	AllowHosts []string `json:"allow_hosts,omitempty"`
	// AllowSchemes defaults to https and http.
	AllowSchemes []string `json:"allow_schemes,omitempty"`
	// AllowPrivate lets the request reach loopback, private and link-local
	// addresses (a local service the plan names explicitly). Cloud metadata
	// addresses stay refused.
	AllowPrivate bool  `json:"allow_private,omitempty"`
	MaxBytes     int64 `json:"max_bytes,omitempty"`
	TimeoutMS    int64 `json:"timeout_ms,omitempty"`
}

// HTTPResult is the http tool's payload.
type HTTPResult struct {
	Status    int               `json:"status"`
	URL       string            `json:"url"` // after redirects
	Headers   map[string]string `json:"headers,omitempty"`
	Body      string            `json:"body"`
	Base64    bool              `json:"base64,omitempty"` // Body is base64 (not UTF-8)
	Truncated bool              `json:"truncated,omitempty"`
}

// HTTP performs one request with an SSRF-safe dialer: every address a name
// resolves to is checked at connect time, and every redirect is checked
// against the scheme and host allowlists again.
func HTTP(a HTTPArgs) (*HTTPResult, error) {
	method := strings.ToUpper(a.Method)
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodPost {
		return nil, fmt.Errorf("method %q is not allowed (GET or POST)", a.Method)
	}
	if method == http.MethodGet && a.Body != "" {
		return nil, errors.New("a GET request has no body")
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return nil, fmt.Errorf("bad url: %w", err)
	}
	if err := a.checkURL(u); err != nil {
		return nil, err
	}
	timeout := DefaultHTTPTimeout
	if a.TimeoutMS > 0 {
		timeout = min(time.Duration(a.TimeoutMS)*time.Millisecond, MaxHTTPTimeout)
	}
	max := int64(DefaultHTTPMax)
	if a.MaxBytes > 0 {
		max = min(a.MaxBytes, HardHTTPMax)
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: a.control}
	tr := &http.Transport{
		Proxy:                  nil, // never a proxy from the environment
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     false,
	}
	client := &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return errors.New("too many redirects")
			}
			return a.checkURL(req.URL)
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var body io.Reader
	if a.Body != "" {
		body = strings.NewReader(a.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "claw")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	r := &HTTPResult{Status: resp.StatusCode, URL: resp.Request.URL.String(), Headers: map[string]string{}}
	if int64(len(data)) > max {
		data, r.Truncated = data[:max], true
	}
	for _, h := range []string{"Content-Type", "Content-Length", "Location", "Last-Modified", "Etag"} {
		if v := resp.Header.Get(h); v != "" {
			r.Headers[h] = v
		}
	}
	if utf8.Valid(child.TrimPartialRune(data)) {
		r.Body = string(child.TrimPartialRune(data))
	} else {
		r.Body, r.Base64 = base64.StdEncoding.EncodeToString(data), true
	}
	return r, nil
}

func (a *HTTPArgs) checkURL(u *url.URL) error {
	schemes := a.AllowSchemes
	if len(schemes) == 0 {
		schemes = []string{"https", "http"}
	}
	ok := false
	for _, s := range schemes {
		if strings.EqualFold(u.Scheme, s) {
			ok = true
		}
	}
	if !ok {
		return fmt.Errorf("scheme %q is not allowed", u.Scheme)
	}
	if u.User != nil {
		return errors.New("credentials in the url are not allowed")
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" {
		return errors.New("url has no host")
	}
	if len(a.AllowHosts) == 0 || HostAllowed(host, a.AllowHosts) {
		return nil
	}
	return fmt.Errorf("host %q is not in the allowlist", host)
}

// HostAllowed reports whether host is on the allowlist, matched the way the
// gate matches allowed_domains: "*" is any host, "*.example.com" the
// subdomains of example.com at any depth (not example.com itself), any
// other entry that exact host. Case and a trailing dot are ignored. Which
// addresses a host may reach is the dialer's check, not this one: "*"
// opens no private address.
func HostAllowed(host string, allow []string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return false
	}
	for _, h := range allow {
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		switch {
		case h == "*", h == host:
			return true
		case strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:]):
			return true
		}
	}
	return false
}

// control runs after name resolution, on the exact address being
// connected: DNS rebinding cannot slip a private address past it.
func (a *HTTPArgs) control(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("network %q is not allowed", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("bad address %q: %w", address, err)
	}
	return checkAddr(ap.Addr(), a.AllowPrivate)
}

var metadataAddrs = []netip.Prefix{
	netip.MustParsePrefix("169.254.169.254/32"),
	netip.MustParsePrefix("169.254.170.2/32"),
	netip.MustParsePrefix("100.100.100.200/32"),
	netip.MustParsePrefix("fd00:ec2::254/128"),
}

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("2001::/32"),
}

// checkAddr refuses addresses that are not public unicast, unless private
// ones are allowed; cloud metadata endpoints are always refused.
func checkAddr(ip netip.Addr, allowPrivate bool) error {
	ip = ip.Unmap()
	for _, p := range metadataAddrs {
		if p.Contains(ip) {
			return fmt.Errorf("address %s is a cloud metadata endpoint", ip)
		}
	}
	if ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() {
		return fmt.Errorf("address %s is not unicast", ip)
	}
	private := ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast()
	for _, p := range nonPublic {
		if p.Contains(ip) {
			private = true
		}
	}
	if private && !allowPrivate {
		return fmt.Errorf("address %s is not public", ip)
	}
	return nil
}
