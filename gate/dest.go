package gate

import (
	"strconv"
	"strings"

	"github.com/clawsec/claw/gate/shell"
)

// Destination is one network destination of a shell action, canonical
// the way the http tool's URL is (see AnalyzeURL): the policies judge it
// against allowed_domains and the refusal of non-public addresses.
type Destination struct {
	// Command is the program that connects.
	Command string `json:"command"`
	// Raw is the destination as written.
	Raw string `json:"raw"`
	// Scheme is the URL scheme in lower case ("" for a bare host).
	Scheme string `json:"scheme"`
	// Host is the canonical host: lower case, no trailing dot, an IPv6
	// address without brackets. Empty when not Known.
	Host string `json:"host"`
	// Port is the port connected to (0: none, as for ICMP).
	Port int `json:"port"`
	// Userinfo is true when the URL carries user[:password]@.
	Userinfo bool `json:"userinfo"`
	// Class is the host's class, as URLInfo.Class.
	Class string `json:"class"`
	// How and Sends are the analyser's (see shell.Dest).
	How   string `json:"how"`
	Sends bool   `json:"sends"`
	// Known is false when the destination is built at run time or is a
	// git remote named, not written.
	Known bool `json:"known"`
	// Suffix is, for a name built at run time, the domain written after
	// the part that is built ("example.com" for $(cat f).example.com).
	Suffix string `json:"suffix"`
	// Error is non-empty when the destination cannot be parsed.
	Error string `json:"error"`
}

// defaultPorts are the ports of URL schemes network clients take.
var defaultPorts = map[string]int{
	"http": 80, "https": 443, "ssh": 22, "git": 9418, "rsync": 873, "ftp": 21, "ftps": 990,
	"sftp": 22, "socks4": 1080, "socks4a": 1080, "socks5": 1080, "socks5h": 1080, "ws": 80, "wss": 443,
}

// destinations canonicalises the destinations of every command.
func destinations(a *shell.Analysis) []Destination {
	out := []Destination{}
	for _, c := range a.Commands {
		for _, d := range c.Dests {
			out = append(out, canonDest(c.Name, d))
		}
	}
	return out
}

func canonDest(cmd string, d shell.Dest) Destination {
	out := Destination{Command: cmd, Raw: truncate(d.Addr, 200), How: d.How, Sends: d.Sends, Port: d.Port}
	if d.How == "remote" {
		return out
	}
	raw := d.Addr
	if d.Dynamic {
		// a host written out in front of what is built at run time
		// (https://host/$(id)) is still known; a name that ends in a
		// written domain ($(...).example.com) reaches that domain's
		// name servers, whatever the part in front
		static, ok := staticAuthority(raw)
		if !ok {
			out.Suffix = staticSuffix(raw)
			return out
		}
		raw = static
	}
	scheme := ""
	if i := strings.Index(raw, "://"); i > 0 {
		scheme = strings.ToLower(raw[:i])
		raw = "http" + raw[i:]
	} else {
		host := raw
		if strings.Count(host, ":") > 1 && !strings.HasPrefix(host, "[") {
			host = "[" + host + "]" // a bare IPv6 address
		}
		if d.Port > 0 && !hasPort(host) {
			host += ":" + strconv.Itoa(d.Port)
		}
		raw = "http://" + host
	}
	u := AnalyzeURL(raw)
	out.Scheme, out.Host, out.Userinfo, out.Class, out.Error = scheme, u.Host, u.Userinfo, u.Class, u.Error
	if u.IP != "" {
		out.Host = u.IP
	}
	out.Known = u.Error == ""
	switch {
	case u.Error != "":
	case hasExplicitPort(raw):
		out.Port = u.Port
	case scheme != "":
		out.Port = defaultPorts[scheme]
		if out.Port == 0 {
			out.Port = d.Port
		}
	case d.Port == 0 && d.How == "url":
		out.Port = 80 // curl and wget take a bare host as http
	}
	return out
}

// hasPort reports whether a bare host ends in :PORT ([v6]:PORT included).
func hasPort(h string) bool {
	if strings.HasPrefix(h, "[") {
		i := strings.Index(h, "]:")
		if i < 0 {
			return false
		}
		_, err := strconv.Atoi(h[i+2:])
		return err == nil
	}
	if strings.Count(h, ":") != 1 {
		return false
	}
	_, err := strconv.Atoi(h[strings.IndexByte(h, ':')+1:])
	return err == nil
}

// hasExplicitPort reports whether the authority of the URL names a port.
func hasExplicitPort(u string) bool {
	rest := u[strings.Index(u, "://")+3:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return hasPort(rest)
}

// dynamicText reports whether s holds shell expansion syntax.
func dynamicText(s string) bool { return strings.ContainsAny(s, "$`") }

// staticAuthority returns scheme://authority of a URL whose authority is
// written out, though what follows it is built at run time.
func staticAuthority(raw string) (string, bool) {
	i := strings.Index(raw, "://")
	if i <= 0 || dynamicText(raw[:i]) {
		return "", false
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		return "", false // the authority may run on into the expansion
	}
	if dynamicText(rest[:end]) || end == 0 {
		return "", false
	}
	return raw[:i+3+end], true
}

// staticSuffix returns the domain written after the last expansion of a
// host name ("$(id).a.example.com" gives "a.example.com"), or "".
func staticSuffix(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 {
		raw = raw[i+3:]
	}
	if j := strings.IndexAny(raw, "/?#:"); j >= 0 && !dynamicText(raw[j:]) {
		raw = raw[:j]
	}
	k := strings.LastIndexAny(raw, "$`)}")
	tail := raw[k+1:]
	if k < 0 || !strings.HasPrefix(tail, ".") || dynamicText(tail) {
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(tail[1:]), ".")
	if !strings.Contains(host, ".") {
		return ""
	}
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return ""
		}
	}
	return host
}
