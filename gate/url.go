package gate

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/clawsec/claw/internal/netclass"
)

// maxURLBytes bounds a URL before it is analysed.
const maxURLBytes = 8192

// AnalyzeURL parses raw the way the http tool will use it and classes its
// host. It never resolves names: the executor's dialer checks every
// resolved address again at connect time.
func AnalyzeURL(raw string) *URLInfo {
	u := &URLInfo{Raw: raw, Class: "invalid"}
	if len(raw) > maxURLBytes {
		u.Error = "url too long"
		return u
	}
	for _, r := range raw {
		if r < 0x21 || r == 0x7f || r == '\\' {
			u.Error = "url contains a control character, space or backslash"
			return u
		}
	}
	p, err := url.Parse(raw)
	if err != nil {
		u.Error = "unparseable url: " + strings.TrimPrefix(err.Error(), "parse ")
		return u
	}
	u.Scheme = strings.ToLower(p.Scheme)
	u.Userinfo = p.User != nil
	if u.Scheme != "http" && u.Scheme != "https" {
		// Not something the http tool fetches: the scheme rule denies it.
		u.Host = strings.ToLower(p.Hostname())
		return u
	}
	if p.Opaque != "" {
		u.Error = "url has no authority (scheme:opaque form)"
		return u
	}
	host := strings.ToLower(p.Hostname())
	host = strings.TrimSuffix(host, ".")
	u.Host = host
	if host == "" {
		u.Error = "url has no host"
		return u
	}
	switch port := p.Port(); {
	case port != "":
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			u.Error = "invalid port " + strconv.Quote(port)
			return u
		}
		u.Port = n
	case u.Scheme == "https":
		u.Port = 443
	case u.Scheme == "http":
		u.Port = 80
	}
	if ip, ok := parseIPAnyNotation(host); ok {
		u.IP = ip.String()
		u.Class = netclass.Class(ip)
		return u
	}
	if strings.HasPrefix(p.Host, "[") {
		u.Error = "bracketed host is not an IPv6 address"
		return u
	}
	u.Class = classifyHostname(host)
	return u
}

// parseIPAnyNotation accepts every spelling a resolver or libc would turn
// into an address: IPv6 (with IPv4-mapped forms unmapped), dotted quads,
// and inet_aton's one-to-four part forms in decimal, octal (leading 0) or
// hex (0x), such as 127.1, 2130706433, 0x7f000001 and 0177.0.0.1.
func parseIPAnyNotation(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is4In6() {
			a = a.Unmap()
		}
		return a.WithZone(""), true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, s := range parts {
		v, ok := parseInetPart(s)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	switch len(vals) {
	case 1:
		n = vals[0]
		if n > 0xffffffff {
			return netip.Addr{}, false
		}
	default:
		last := vals[len(vals)-1]
		lastBits := uint(8 * (5 - len(vals)))
		if last >= 1<<lastBits {
			return netip.Addr{}, false
		}
		for _, v := range vals[:len(vals)-1] {
			if v > 0xff {
				return netip.Addr{}, false
			}
			n = n<<8 | v
		}
		n = n<<lastBits | last
	}
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

func parseInetPart(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true
		}
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// classifyHostname classes a name without resolving it. Names that always
// mean a local or metadata service are classed as such; a single-label name
// is an intranet name, not a public one.
func classifyHostname(h string) string {
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return "invalid" // non-ASCII (IDN spoofing) and odd characters
		}
	}
	if strings.Contains(h, "..") || strings.HasPrefix(h, ".") || strings.HasPrefix(h, "-") {
		return "invalid"
	}
	switch {
	case h == "localhost" || strings.HasSuffix(h, ".localhost") ||
		h == "localhost.localdomain" || h == "ip6-localhost" || h == "ip6-loopback":
		return "loopback"
	case h == "metadata" || h == "metadata.google.internal" || h == "instance-data" ||
		strings.HasSuffix(h, ".metadata.google.internal") || h == "metadata.azure.com":
		return "metadata"
	case strings.HasSuffix(h, ".internal") || strings.HasSuffix(h, ".local") ||
		strings.HasSuffix(h, ".lan") || strings.HasSuffix(h, ".home.arpa") ||
		strings.HasSuffix(h, ".intranet") || strings.HasSuffix(h, ".corp"):
		return "private"
	case !strings.Contains(h, "."):
		return "private"
	}
	// A name whose last label is all digits is not a DNS name a resolver
	// would look up as such; libc may read it as a number.
	last := h[strings.LastIndexByte(h, '.')+1:]
	if _, err := strconv.Atoi(last); err == nil {
		return "invalid"
	}
	return "public"
}
