package shell

import (
	"strconv"
	"strings"
)

// Dest is a network destination a command would connect to, as written.
// The gate canonicalises Addr the way it does the http tool's URL.
type Dest struct {
	// Addr is a URL, a host, host:port or [v6]:port; a remote name for
	// How "remote"; the source text when Dynamic.
	Addr string `json:"addr"`
	// Port is the port to use when Addr names none (0: none, as for ping).
	Port int `json:"port"`
	// How says where the destination came from: "url", "host", "proxy",
	// "resolve" (curl --resolve, --connect-to), "remote" (a git remote
	// name, whose URL is in the repository's configuration), "registry"
	// (a package manager's default registry) or "dns" (a name looked up,
	// which itself carries data to the name servers).
	How string `json:"how"`
	// Sends is true when the command sends data or changes remote state
	// (an upload, a POST, a push, a publish, a raw connection).
	Sends bool `json:"sends"`
	// Dynamic is true when the destination is built at run time.
	Dynamic bool `json:"dynamic"`
}

// dest records a destination of the current command.
func (b *build) dest(f field, port int, how string, sends bool) {
	d := Dest{Addr: f.val, Port: port, How: how, Sends: sends, Dynamic: f.dyn}
	for _, x := range b.cmd.Dests {
		if x == d {
			return
		}
	}
	b.cmd.Dests = append(b.cmd.Dests, d)
}

// registry records a package manager's default registry hosts.
func (b *build) registry(sends bool, hosts ...string) {
	for _, h := range hosts {
		b.dest(field{val: h}, 443, "registry", sends)
	}
}

// netHandlers find the destinations of network clients and package
// managers, after the command's own handler has parsed it.
var netHandlers = map[string]func(*build){
	"curl": (*build).curlDests, "wget": (*build).wgetDests, "git": (*build).gitDests,
	"ssh": (*build).sshDests, "scp": (*build).copyDests, "sftp": (*build).sshDests, "rsync": (*build).copyDests,
	"nc": (*build).ncDests, "ncat": (*build).ncDests, "netcat": (*build).ncDests, "telnet": (*build).ncDests,
	"socat": (*build).socatDests, "openssl": (*build).opensslDests,
	"ping": (*build).hostDests, "ping6": (*build).hostDests, "traceroute": (*build).hostDests, "tracepath": (*build).hostDests,
	"mtr": (*build).hostDests, "arping": (*build).hostDests, "whois": (*build).hostDests,
	"dig": (*build).dnsDests, "nslookup": (*build).dnsDests, "host": (*build).dnsDests, "drill": (*build).dnsDests,
	"kdig": (*build).dnsDests, "delv": (*build).dnsDests, "getent": (*build).dnsDests,
	"aria2c": (*build).urlDests, "http": (*build).urlDests, "https": (*build).urlDests, "xh": (*build).urlDests,
	"httpie": (*build).urlDests, "lynx": (*build).urlDests, "w3m": (*build).urlDests, "links": (*build).urlDests,
	"ftp": (*build).urlDests, "lftp": (*build).urlDests, "tftp": (*build).urlDests,
	"npm": (*build).npmDests, "pnpm": (*build).npmDests, "yarn": (*build).npmDests, "npx": (*build).npmDests,
	"pnpx": (*build).npmDests, "bunx": (*build).npmDests, "bun": (*build).npmDests,
	"pip": (*build).pipDests, "pip3": (*build).pipDests, "uv": (*build).pipDests, "poetry": (*build).pipDests,
	"pipenv": (*build).pipDests, "pipx": (*build).pipDests, "twine": (*build).pipDests,
	"go": (*build).goDests, "cargo": (*build).cargoDests, "gem": (*build).gemDests, "bundle": (*build).gemDests,
	"gh": (*build).ghDests,
}

var (
	curlSends = set("d data data-binary data-ascii data-raw data-urlencode json F form form-string T upload-file")
	wgetSends = set("post-data post-file body-data body-file")
	hostSpec  = spec("c: i: I: s: t: W: w: l: p: Q: S: T: m: f: N: q: z: M: P: F: h: r: -count= -interval= -interface= -size= -ttl= -timeout= -deadline=")
	dnsSpec   = spec("b: c: f: k: p: q: t: x: y: -type= -class=")
	ncSpec    = spec("e: c: p: s: w: i: q: x: X: P: I: O: T: V: M: m: --exec=! --sh-exec=! --lua-exec=! --proxy= --proxy-type= --source= --wait= --output=")
)

func (b *build) netDests() {
	if isPython(b.name) {
		b.pythonModuleDests()
		return
	}
	h, ok := netHandlers[b.name]
	if !ok {
		h = netHandlers[unversioned(b.name)]
	}
	if h != nil {
		h(b)
	}
}

// pythonModuleDests: python3 -m pip (or pipx, twine, uv) is that tool.
func (b *build) pythonModuleDests() {
	for i := 1; i+1 < len(b.args); i++ {
		if b.args[i].dyn || b.args[i].val != "-m" {
			continue
		}
		mod := b.args[i+1]
		if h, ok := netHandlers[mod.val]; ok && !mod.dyn && h != nil {
			sub := *b
			sub.name = mod.val
			sub.args = b.args[i+1:]
			sub.cmd.Dests = nil
			h(&sub)
			b.cmd.Dests = append(b.cmd.Dests, sub.cmd.Dests...)
		}
		return
	}
}

// operandFields returns the operands of the last parse.
func (b *build) operandFields() []field { return fieldsAt(b.args, b.p.operands) }

func (b *build) curlDests() {
	sends := false
	for _, v := range b.p.vals {
		if curlSends[v.name] {
			sends = true
		}
		if v.name == "X" || v.name == "request" {
			m := strings.ToUpper(v.val.val)
			sends = sends || v.val.dyn || m != "GET" && m != "HEAD"
		}
	}
	sends = sends || b.p.has("T", "upload-file")
	for _, f := range b.operandFields() {
		b.dest(f, 0, "url", sends)
	}
	for _, f := range b.p.all("url") {
		b.dest(f, 0, "url", sends)
	}
	// a DNS-over-HTTPS server is asked every name the transfer resolves
	for _, f := range b.p.all("doh-url") {
		b.dest(f, 0, "url", sends)
	}
	for _, f := range b.p.all("x", "proxy", "preproxy", "socks4", "socks4a", "socks5", "socks5-hostname") {
		b.dest(f, 1080, "proxy", sends)
	}
	// --resolve HOST:PORT:ADDR[,ADDR] and --connect-to HOST:PORT:HOST2:PORT2
	// send the connection to ADDR and HOST2 instead
	for _, f := range b.p.all("resolve") {
		_, port, addrs := splitResolve(f.val, 2)
		for _, a := range strings.Split(addrs, ",") {
			b.dest(field{val: bracketHost(strings.TrimPrefix(a, "+")), dyn: f.dyn}, atoiOr(port, 443), "resolve", sends)
		}
	}
	for _, f := range b.p.all("connect-to") {
		_, _, rest := splitResolve(f.val, 2)
		host, port, _ := strings.Cut(rest, ":")
		if strings.HasPrefix(rest, "[") {
			if i := strings.Index(rest, "]"); i > 0 {
				host, port = rest[1:i], strings.TrimPrefix(rest[i+1:], ":")
			}
		}
		if host != "" || f.dyn {
			b.dest(field{val: bracketHost(host), dyn: f.dyn}, atoiOr(port, 443), "resolve", sends)
		}
	}
	if b.p.has("K", "config") {
		b.dest(field{val: "curl -K", dyn: true}, 0, "url", sends)
	}
}

// splitResolve cuts "HOST:PORT:REST" (HOST may be [v6] or empty).
func splitResolve(s string, n int) (host, port, rest string) {
	parts := strings.SplitN(s, ":", n+1)
	if len(parts) < n+1 {
		return s, "", ""
	}
	return parts[0], parts[1], parts[2]
}

func bracketHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 && n < 65536 {
		return n
	}
	return def
}

func (b *build) wgetDests() {
	sends := false
	for _, v := range b.p.vals {
		if wgetSends[v.name] {
			sends = true
		}
		if v.name == "method" {
			m := strings.ToUpper(v.val.val)
			sends = sends || v.val.dyn || m != "GET" && m != "HEAD"
		}
	}
	for _, f := range b.operandFields() {
		b.dest(f, 0, "url", sends)
	}
	for _, v := range b.p.all("e", "execute") {
		k, val, _ := strings.Cut(v.val, "=")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "http_proxy", "https_proxy", "ftp_proxy", "httpproxy", "httpsproxy", "ftpproxy":
			b.dest(field{val: strings.TrimSpace(val), dyn: v.dyn}, 0, "proxy", sends)
		}
	}
	if b.p.has("i", "input-file") {
		b.dest(field{val: "wget -i", dyn: true}, 0, "url", sends)
	}
}

// gitNet are the git subcommands that talk to a remote, and whether they
// send to it.
var gitNet = map[string]bool{
	"clone": false, "fetch": false, "pull": false, "ls-remote": false, "remote": false, "submodule": false,
	"push": true, "send-email": true, "request-pull": false, "archive": false,
}

func (b *build) gitDests() {
	// git -c http.proxy=URL (or https.proxy, remote.NAME.proxy) sends
	// every connection through that proxy
	for i := 1; i+1 < len(b.args); i++ {
		if b.args[i].dyn || b.args[i].val != "-c" {
			continue
		}
		kv := b.args[i+1]
		key, val, ok := strings.Cut(kv.val, "=")
		key = strings.ToLower(key)
		if ok && (key == "http.proxy" || key == "https.proxy" || strings.HasPrefix(key, "remote.") && strings.HasSuffix(key, ".proxy")) {
			b.dest(field{val: val, dyn: kv.dyn}, 1080, "proxy", false)
		}
	}
	if len(b.cmd.Operands) == 0 {
		return
	}
	sub := b.cmd.Operands[0]
	sends, ok := gitNet[sub]
	if !ok {
		return
	}
	ops := b.operandFields()
	switch sub {
	case "remote":
		// git remote add NAME URL, git remote set-url NAME URL: the URL is
		// where later fetches and pushes go
		if len(ops) >= 3 && (ops[0].val == "add" || ops[0].val == "set-url") {
			b.remoteDest(ops[len(ops)-1], false, true)
		} else if len(ops) >= 2 && ops[0].val == "update" {
			b.remoteDest(field{val: ""}, false, false)
		}
		return
	case "submodule":
		if len(ops) >= 2 && ops[0].val == "add" {
			b.remoteDest(ops[1], false, true)
		} else if len(ops) >= 1 && (ops[0].val == "update" || ops[0].val == "sync") {
			b.remoteDest(field{val: ""}, false, false)
		}
		return
	case "archive":
		if v, ok := b.p.val("remote"); ok {
			b.remoteDest(v, false, true)
		}
		return
	case "send-email":
		b.dest(field{val: "git send-email", dyn: true}, 0, "host", true)
		return
	}
	if len(ops) == 0 || (sub != "clone" && !isURL(ops[0].val) && !isRemoteSpec(ops[0].val) && strings.Contains(ops[0].val, "/")) {
		b.remoteDest(field{val: ""}, sends, false)
		return
	}
	b.remoteDest(ops[0], sends, sub == "clone")
}

// remoteDest records a git remote: a URL, scp-like user@host:path, a
// local path (no network), or the name of a configured remote.
func (b *build) remoteDest(f field, sends, mustBeURL bool) {
	v := f.val
	switch {
	case f.dyn:
		b.dest(f, 0, "url", sends)
	case isURL(v):
		if strings.HasPrefix(strings.ToLower(v), "file://") {
			return
		}
		b.dest(f, 0, "url", sends)
	case isRemoteSpec(v) && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "."):
		host, _, _ := strings.Cut(v, ":")
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
		b.dest(field{val: host}, 22, "host", sends)
	case mustBeURL || strings.Contains(v, "/") || strings.HasPrefix(v, "."):
		// a path: a repository on this machine
	default:
		b.dest(field{val: v}, 0, "remote", sends)
	}
}

func (b *build) sshDests() {
	p := parseOpts(b.args, 1, spec("B: b: c: D: E: e: F: I: i: J: L: l: m: O: o: P: p: Q: R: S: W: w: 1 2 4 6 A a C f G g K k M N n q s T t V v X x Y y"))
	port := 22
	if v, ok := p.val("p", "P"); ok {
		port = atoiOr(v.val, 22)
	}
	for _, v := range p.all("J") {
		for _, h := range strings.Split(v.val, ",") {
			b.dest(field{val: userHost(h), dyn: v.dyn}, 22, "host", true)
		}
	}
	for _, v := range p.all("o") {
		k, val, _ := strings.Cut(v.val, "=")
		if strings.EqualFold(strings.TrimSpace(k), "ProxyJump") {
			b.dest(field{val: userHost(strings.TrimSpace(val)), dyn: v.dyn}, 22, "host", true)
		}
	}
	if len(p.operands) > 0 {
		f := b.args[p.operands[0]]
		b.dest(field{val: userHost(f.val), dyn: f.dyn}, port, "host", true)
	}
}

// userHost strips user@ and a :path or :port from an ssh-style target.
func userHost(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, ']'); i > 0 {
			return s[:i+1]
		}
	}
	h, _, _ := strings.Cut(s, ":")
	return h
}

// copyDests: scp and rsync operands of the form [user@]host:path, rsync
// URLs and host::module. Copying to a remote operand (the last) sends.
func (b *build) copyDests() {
	ops := b.operandFields()
	for i, f := range ops {
		sends := i == len(ops)-1 && len(ops) > 1
		v := f.val
		switch {
		case f.dyn:
			if strings.Contains(v, ":") {
				b.dest(f, 22, "host", sends)
			}
		case isURL(v):
			b.dest(f, 873, "url", sends)
		case strings.Contains(v, "::"):
			host, _, _ := strings.Cut(v, "::")
			b.dest(field{val: userHost(host)}, 873, "host", sends)
		case isRemoteSpec(v) && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "."):
			b.dest(field{val: userHost(v)}, 22, "host", sends)
		}
	}
}

func (b *build) ncDests() {
	p := parseOpts(b.args, 1, ncSpec)
	if p.has("l", "listen") {
		return
	}
	ops := fieldsAt(b.args, p.operands)
	if len(ops) == 0 {
		return
	}
	port := 0
	if len(ops) > 1 {
		port = atoiOr(ops[1].val, 0)
		if ops[1].dyn {
			b.dest(ops[0], 0, "host", true)
			return
		}
	}
	b.dest(ops[0], port, "host", true)
	for _, v := range p.all("x", "proxy") {
		b.dest(v, 1080, "proxy", true)
	}
}

func (b *build) socatDests() {
	for _, f := range b.operandFields() {
		kind, rest, _ := strings.Cut(f.val, ":")
		switch strings.ToUpper(kind) {
		case "TCP", "TCP4", "TCP6", "UDP", "UDP4", "UDP6", "SSL", "OPENSSL", "SCTP", "DCCP", "TCP-CONNECT", "UDP-CONNECT", "UDP-SENDTO", "SOCKS4", "SOCKS4A", "SOCKS5", "PROXY":
			addr, _, _ := strings.Cut(rest, ",")
			host, port := splitHostPort(addr)
			b.dest(field{val: host, dyn: f.dyn}, atoiOr(port, 0), "host", true)
		}
	}
}

// splitHostPort cuts host:port where host may be [v6].
func splitHostPort(s string) (string, string) {
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, ']'); i > 0 {
			return s[:i+1], strings.TrimPrefix(s[i+1:], ":")
		}
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.Count(s, ":") > 1 {
		return s, ""
	}
	return s[:i], s[i+1:]
}

func (b *build) opensslDests() {
	args := b.args
	for i := 1; i+1 < len(args); i++ {
		switch args[i].val {
		case "-connect", "-proxy":
			host, port := splitHostPort(args[i+1].val)
			b.dest(field{val: host, dyn: args[i+1].dyn}, atoiOr(port, 443), "host", true)
		}
	}
	if len(args) > 1 && args[1].val == "s_client" && !b.hasArg("-connect") {
		b.dest(field{val: "localhost"}, 443, "host", true)
	}
}

func (b *build) hasArg(a string) bool {
	for _, f := range b.args[1:] {
		if f.val == a {
			return true
		}
	}
	return false
}

// hostDests: ping, traceroute, whois and the like take hosts as operands;
// a payload can ride in the name or the packets.
func (b *build) hostDests() {
	p := parseOpts(b.args, 1, hostSpec)
	for _, f := range fieldsAt(b.args, p.operands) {
		if b.name == "whois" {
			b.dest(f, 43, "dns", true)
			continue
		}
		b.dest(f, 0, "dns", true)
	}
}

// dnsDests: dig NAME, dig @SERVER NAME, nslookup NAME [SERVER], host NAME
// [SERVER]. The name looked up reaches the name servers: it is data sent.
func (b *build) dnsDests() {
	if b.name == "getent" {
		ops := b.operandFields()
		if len(ops) >= 2 && (ops[0].val == "hosts" || ops[0].val == "ahosts" || ops[0].val == "ahostsv4" || ops[0].val == "ahostsv6") {
			for _, f := range ops[1:] {
				b.dest(f, 53, "dns", true)
			}
		}
		return
	}
	p := parseOpts(b.args, 1, dnsSpec)
	dnsTypes := set("a aaaa any axfr ixfr caa cname dnskey ds mx ns ptr soa srv txt hinfo naptr sshfp tlsa https svcb in ch hs")
	for _, f := range fieldsAt(b.args, p.operands) {
		v := f.val
		if !f.dyn && (strings.HasPrefix(v, "+") || dnsTypes[strings.ToLower(v)]) {
			continue
		}
		if strings.HasPrefix(v, "@") {
			b.dest(field{val: v[1:], dyn: f.dyn}, 53, "host", true)
			continue
		}
		b.dest(f, 53, "dns", true)
	}
}

// urlDests: every operand that looks like a URL or a host name.
func (b *build) urlDests() {
	sends := false
	for _, f := range b.args[1:] {
		if f.dyn {
			continue
		}
		switch strings.ToUpper(f.val) {
		case "POST", "PUT", "PATCH", "DELETE", "--FORM", "-F", "--JSON", "-J", "--UPLOAD":
			sends = true
		}
	}
	for _, f := range b.args[1:] {
		if !f.dyn && (strings.HasPrefix(f.val, "-") || !strings.Contains(f.val, ".") && !isURL(f.val) && f.val != "localhost") {
			continue
		}
		if !f.dyn && (strings.Contains(f.val, "=") || strings.Contains(f.val, ":=")) && !isURL(f.val) {
			continue
		}
		b.dest(f, 0, "url", sends || b.name == "ftp" || b.name == "lftp" || b.name == "tftp")
	}
}

// --- package managers: their default registries and given indexes ---

var (
	npmFetch  = set("install i in ins inst insta instal isnt isntal add ci update up upgrade udpate audit outdated view v info show exec x dlx create init dedupe ddp fetch doctor search s se find repo pack")
	npmSend   = set("publish unpublish deprecate dist-tag owner access token login adduser logout star unstar team org hook")
	pipFetch  = set("install download wheel index search lock sync add update upgrade tool run")
	pipSend   = set("upload publish")
	goFetch   = set("get install")
	goModNet  = set("download tidy graph why")
	cargoNet  = set("fetch update add install search generate-lockfile vendor")
	cargoSend = set("publish yank owner login logout")
	gemFetch  = set("install update fetch outdated search")
)

func (b *build) npmDests() {
	var sub string
	for _, f := range b.args[1:] {
		if !f.dyn && !strings.HasPrefix(f.val, "-") {
			sub = f.val
			break
		}
	}
	name := b.name
	fetch, send := npmFetch[sub], npmSend[sub]
	switch name {
	case "npx", "pnpx", "bunx":
		fetch = true
	case "yarn", "pnpm", "bun":
		fetch = fetch || sub == "" || sub == "dlx"
		if name == "bun" {
			fetch = sub == "install" || sub == "i" || sub == "add" || sub == "update" || sub == "x" || sub == "outdated" || sub == "publish"
		}
	}
	if !fetch && !send {
		return
	}
	reg := "registry.npmjs.org"
	if name == "yarn" {
		reg = "registry.yarnpkg.com"
	}
	if v, ok := b.flagValue("registry"); ok {
		b.dest(v, 0, "url", send)
	} else {
		b.registry(send, reg)
	}
	for _, n := range []string{"proxy", "https-proxy"} {
		if v, ok := b.flagValue(n); ok {
			b.dest(v, 0, "proxy", send)
		}
	}
	for _, f := range b.args[1:] {
		if f.dyn || isURL(f.val) || strings.HasPrefix(f.val, "git+") {
			b.dest(field{val: strings.TrimPrefix(f.val, "git+"), dyn: f.dyn}, 0, "url", send)
		}
	}
}

// flagValue finds --name VALUE or --name=VALUE among the arguments.
func (b *build) flagValue(names ...string) (field, bool) {
	for i := 1; i < len(b.args); i++ {
		f := b.args[i]
		if f.dyn {
			continue
		}
		for _, n := range names {
			flag := "--" + n
			if len(n) == 1 {
				flag = "-" + n
			}
			if f.val == flag && i+1 < len(b.args) {
				return b.args[i+1], true
			}
			if v, ok := strings.CutPrefix(f.val, flag+"="); ok {
				return field{val: v}, true
			}
		}
	}
	return field{}, false
}

func (b *build) pipDests() {
	var sub string
	for _, f := range b.args[1:] {
		if !f.dyn && !strings.HasPrefix(f.val, "-") && f.val != "pip" {
			sub = f.val
			break
		}
	}
	if b.name == "uv" || b.name == "poetry" || b.name == "pipenv" {
		if sub == "pip" || sub == "tool" {
			for _, f := range b.args[2:] {
				if !f.dyn && !strings.HasPrefix(f.val, "-") {
					sub = f.val
					break
				}
			}
		}
	}
	send := pipSend[sub] || b.name == "twine" && sub == "upload"
	fetch := pipFetch[sub] || b.name == "pipx"
	if b.name == "poetry" || b.name == "pipenv" {
		fetch = fetch || sub == "install" || sub == "add" || sub == "update" || sub == "lock" || sub == "sync"
	}
	if !fetch && !send {
		return
	}
	given := false
	for _, n := range []string{"index-url", "extra-index-url", "i", "find-links", "f", "index", "default-index", "repository-url", "proxy"} {
		if v, ok := b.flagValue(n); ok {
			given = true
			how := "url"
			if n == "proxy" {
				how = "proxy"
			}
			b.dest(v, 0, how, send)
		}
	}
	if send {
		b.registry(true, "upload.pypi.org")
		return
	}
	if !given || b.hasFlag("extra-index-url") {
		b.registry(false, "pypi.org", "files.pythonhosted.org")
	}
	for _, f := range b.args[1:] {
		if v := strings.TrimPrefix(f.val, "git+"); !f.dyn && isURL(v) {
			b.dest(field{val: v}, 0, "url", false)
		}
	}
}

func (b *build) hasFlag(n string) bool {
	_, ok := b.flagValue(n)
	return ok
}

func (b *build) goDests() {
	ops := b.cmd.Operands
	if len(ops) == 0 {
		return
	}
	sub := ops[0]
	net := goFetch[sub] || sub == "mod" && len(ops) > 1 && goModNet[ops[1]] ||
		sub == "list" && b.hasAnyOpt("m", "u") || sub == "run" && len(ops) > 1 && strings.Contains(ops[1], "@")
	if sub == "install" {
		net = false
		for _, o := range ops[1:] {
			net = net || strings.Contains(o, "@")
		}
	}
	if net {
		b.registry(false, "proxy.golang.org", "sum.golang.org")
	}
}

func (b *build) hasAnyOpt(names ...string) bool {
	for _, o := range b.cmd.Opts {
		for _, n := range names {
			if o == n {
				return true
			}
		}
	}
	return false
}

func (b *build) cargoDests() {
	ops := b.cmd.Operands
	if len(ops) == 0 {
		return
	}
	sub := ops[0]
	if !cargoNet[sub] && !cargoSend[sub] {
		return
	}
	if v, ok := b.flagValue("index", "registry"); ok && strings.Contains(v.val, "://") {
		b.dest(v, 0, "url", cargoSend[sub])
		return
	}
	if v, ok := b.flagValue("git"); ok {
		b.dest(v, 0, "url", false)
	}
	b.registry(cargoSend[sub], "index.crates.io", "static.crates.io", "crates.io")
}

func (b *build) gemDests() {
	var sub string
	for _, f := range b.args[1:] {
		if !f.dyn && !strings.HasPrefix(f.val, "-") {
			sub = f.val
			break
		}
	}
	switch {
	case b.name == "bundle" && (sub == "" || sub == "install" || sub == "update" || sub == "add" || sub == "outdated"):
		b.registry(false, "rubygems.org", "index.rubygems.org")
	case b.name == "gem" && gemFetch[sub]:
		b.registry(false, "rubygems.org", "index.rubygems.org")
	case b.name == "gem" && (sub == "push" || sub == "yank" || sub == "owner"):
		b.registry(true, "rubygems.org")
	}
}

// ghDests: the GitHub CLI talks to api.github.com; creating, editing,
// merging, commenting or any API call with a method other than GET
// changes remote state.
func (b *build) ghDests() {
	ops := b.operandFields()
	if len(ops) == 0 {
		return
	}
	sends := false
	for _, f := range ops[1:] {
		switch f.val {
		case "create", "edit", "merge", "close", "reopen", "comment", "delete", "upload", "review", "ready", "fork", "sync", "archive", "rename", "set", "transfer", "lock", "unlock", "pin", "develop", "cancel", "rerun", "enable", "disable", "run":
			sends = true
		}
	}
	if ops[0].val == "api" {
		if v, ok := b.flagValue("X", "method"); ok {
			m := strings.ToUpper(v.val)
			sends = sends || v.dyn || m != "GET" && m != "HEAD"
		}
		if b.hasFlag("f") || b.hasFlag("F") || b.hasFlag("field") || b.hasFlag("raw-field") || b.hasFlag("input") {
			sends = true
		}
	}
	host := "api.github.com"
	if v, ok := b.flagValue("hostname"); ok {
		b.dest(v, 443, "host", sends)
		return
	}
	b.registry(sends, host)
}
