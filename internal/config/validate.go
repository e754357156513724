package config

import (
	"encoding/base64"
	"fmt"
	"maps"
	"math"
	"net"
	"net/netip"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of the numeric settings.
const (
	maxLandlockABI  = 16
	maxGateTimeout  = time.Minute
	maxShellTimeout = 24 * time.Hour
	maxPids         = 1 << 22
	maxGrantExpiry  = 365 * 24 * time.Hour
)

// lazyRegexp returns a function that compiles expr on its first call:
// every claw process links this package, few validate a config.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

var ruleIDRe = lazyRegexp(`^[a-z][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$`)

// validate checks the values of every key present in the file. Defaults
// are valid by construction and are not reported.
func (s *source) validate(c *Config) {
	sec, sb, rc := &c.Security, &c.Sandbox, &c.Receipts

	s.checkPath("workspace_dir", c.WorkspaceDir, false)
	s.checkName("default_provider", c.DefaultProvider)
	s.checkName("default_model", c.DefaultModel)

	if s.has("security.autonomy") && !slices.Contains(Autonomies, sec.Autonomy) {
		s.errAtVal("security.autonomy", "%s is not one of %s", show("security.autonomy", sec.Autonomy), strings.Join(Autonomies, ", "))
	}
	s.checkPaths("security.forbidden_paths", sec.ForbiddenPaths, true)
	s.checkPaths("security.read_paths", sec.ReadPaths, false)
	s.checkCommands("security.forbidden_commands", sec.ForbiddenCommands)
	s.checkCommands("security.allowed_commands", sec.AllowedCommands)
	s.checkDomains("security.allowed_domains", sec.AllowedDomains)
	s.checkDomains("security.allowed_registries", sec.AllowedRegistries)
	if s.has("security.allow_private_cidrs") {
		for i, v := range sec.AllowPrivateCIDRs {
			p := fmt.Sprintf("security.allow_private_cidrs[%d]", i)
			if msg := checkCIDR(v); msg != "" {
				s.errAtVal(p, "%s %s", show(p, v), msg)
			}
		}
	}
	s.checkWorkspacePaths("security.workspace_exec_allow", sec.WorkspaceExecAllow)
	if s.has("security.passphrase_hash") && sec.PassphraseHash != "" {
		if msg := checkPHC(sec.PassphraseHash); msg != "" {
			// Never echo the value: it is a secret.
			s.errAtVal("security.passphrase_hash", "%s", msg)
		}
	}
	if s.has("security.passphrase_for") {
		for i, v := range sec.PassphraseFor {
			p := fmt.Sprintf("security.passphrase_for[%d]", i)
			if !slices.Contains(RiskLevels, v) && !ruleIDRe().MatchString(v) {
				s.errAtVal(p, "%s is neither a risk level (%s) nor a rule id (like \"cmd.rm.workspace\")",
					show(p, v), strings.Join(RiskLevels, ", "))
			}
		}
	}
	s.checkDuration("security.gate_timeout", sec.GateTimeout, maxGateTimeout)

	s.checkRange("sandbox.min_landlock_abi", sb.MinLandlockABI, 1, maxLandlockABI)
	if s.has("sandbox.run_as") && sb.RunAs != "" && !runAsName(sb.RunAs) {
		s.errAtVal("sandbox.run_as", "%s is not a user name or uid (\"\" stays the current user)", show("sandbox.run_as", sb.RunAs))
	}
	s.checkDuration("sandbox.timeout", sb.Timeout, maxShellTimeout)
	if s.has("sandbox.memory_max") {
		if _, err := ParseSize(sb.MemoryMax); err != nil {
			s.errAtVal("sandbox.memory_max", "%s %v", show("sandbox.memory_max", sb.MemoryMax), err)
		}
	}
	s.checkRange("sandbox.pids_max", sb.PidsMax, 1, maxPids)
	if s.has("sandbox.http_ports") {
		for i, port := range sb.HTTPPorts {
			s.checkRange(fmt.Sprintf("sandbox.http_ports[%d]", i), port, 1, 65535)
		}
	}

	s.checkPaths("sandbox.path", sb.Path, false)

	s.checkPath("receipts.dir", rc.Dir, false)
	s.checkPath("receipts.key", rc.Key, false)
	s.checkRange("receipts.checkpoint_every", rc.Checkpoint, 1, math.MaxInt32)

	s.checkDuration("security.approval_timeout", sec.ApprovalTimeout, maxShellTimeout)
	s.checkDuration("security.grant_max_expiry", sec.GrantMaxExpiry, maxGrantExpiry)
	s.checkDuration("security.grant_expiry", sec.GrantExpiry, sec.GrantMaxExpiry.Duration)
	s.checkRange("security.passphrase_max_failures", sec.PassphraseMaxFailures, 1, 100)
	s.checkDuration("security.passphrase_lockout", sec.PassphraseLockout, 7*24*time.Hour)

	ag := &c.Agent
	s.checkRange("agent.max_tool_rounds", ag.MaxToolRounds, 1, 100)
	s.checkRange("agent.max_response_bytes", ag.MaxResponseBytes, 1<<10, 64<<20)
	s.checkDuration("agent.tool_timeout", ag.ToolTimeout, maxShellTimeout)
	s.checkDuration("agent.shell_timeout", ag.ShellTimeout, maxShellTimeout)
	s.checkDuration("agent.http_timeout", ag.HTTPTimeout, maxShellTimeout)
	s.checkRange("agent.history_messages", ag.HistoryMessages, 1, 10000)
	s.checkRange("agent.history_budget", ag.HistoryBudget, 1<<10, 16<<20)
	s.checkPath("agent.soul", ag.Soul, false)
	s.checkPath("agent.memory_db", ag.MemoryDB, false)

	s.validateAutonomous(&c.Autonomous)
	s.validateDelegate(&c.Delegate)
	s.validateProviders(c)
	for _, n := range slices.Sorted(maps.Keys(c.Channels)) {
		s.validateChannel(c, n)
	}

	sv := &c.Serve
	s.checkPath("serve.socket", sv.Socket, false)
	s.checkPath("serve.token_file", sv.TokenFile, false)
	if s.has("serve.listen") && sv.Listen != "" {
		if _, port, err := net.SplitHostPort(sv.Listen); err != nil || port == "" {
			s.errAtVal("serve.listen", "%s is not host:port, like \"127.0.0.1:8787\"", show("serve.listen", sv.Listen))
		} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			s.errAtVal("serve.listen", "%s has an invalid port", show("serve.listen", sv.Listen))
		}
	}
	s.checkRange("serve.max_body_bytes", sv.MaxBodyBytes, 1<<10, 64<<20)
	s.checkDuration("serve.read_header_timeout", sv.ReadHeaderTimeout, time.Hour)
	s.checkDuration("serve.request_timeout", sv.RequestTimeout, maxShellTimeout)
}

// hideUserinfo replaces the credentials of a URL, so an error never
// echoes a password.
func hideUserinfo(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		return s[:i+3] + "[REDACTED]@" + rest[at+1:]
	}
	return s
}

// validateProviders checks every [providers.NAME] section and that the
// names default_provider, fallbacks, routes and default refer to exist.
func (s *source) validateProviders(c *Config) {
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	slices.Sort(names)
	ref := func(path, name string) {
		if !s.has(path) || name == "" {
			return
		}
		if _, ok := c.Providers[name]; !ok {
			s.errAtVal(path, "%s names no [providers.%s] section (defined: %s)", show(path, name), name, strings.Join(names, ", "))
		}
	}
	ref("default_provider", c.DefaultProvider)
	s.checkHeaders()
	for _, n := range names {
		base := joinKey("providers", n)
		if !s.hasUnder(base) {
			continue // a default
		}
		pv := c.Providers[n]
		key := func(k string) string { return joinKey(base, k) }
		if !providerShape.MatchString(n) {
			s.errAtKey(base, "provider name %q must be letters, digits, - and _", n)
		}
		switch {
		case pv.Kind == "":
			s.errAtKey(base, "provider %s has no kind; set kind to one of %s", n, strings.Join(ProviderKinds, ", "))
		case !slices.Contains(ProviderKinds, pv.Kind):
			s.errAtVal(key("kind"), "%s is not one of %s", show(key("kind"), pv.Kind), strings.Join(ProviderKinds, ", "))
		}
		// Empty optional values mean "the provider's default" (and are
		// what `claw config show` prints for them).
		if s.has(key("base_url")) && pv.BaseURL != "" {
			if u, err := url.Parse(pv.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
				s.errAtVal(key("base_url"), "%s is not an http(s) URL without credentials", show(key("base_url"), hideUserinfo(pv.BaseURL)))
			}
		}
		if s.has(key("api_key_env")) && pv.APIKeyEnv != "" && !envNameShape.MatchString(pv.APIKeyEnv) {
			// Never echo it: a pasted key is the usual mistake.
			s.errAtVal(key("api_key_env"), "must name an environment variable (like \"OPENAI_API_KEY\"), not hold the key itself")
		}
		if pv.Model != "" {
			s.checkName(key("model"), pv.Model)
		}
		if pv.Timeout.Duration != 0 {
			s.checkDuration(key("timeout"), pv.Timeout, time.Hour)
		}
		if pv.MaxResponseBytes != 0 {
			s.checkRange(key("max_response_bytes"), pv.MaxResponseBytes, 1<<10, 64<<20)
		}
		if pv.Script != "" {
			s.checkPath(key("script"), pv.Script, false)
		}
		for i, f := range pv.Fallbacks {
			ref(fmt.Sprintf("%s[%d]", key("fallbacks"), i), f)
		}
		for r, to := range pv.Routes {
			ref(joinKey(key("routes"), r), to)
		}
		ref(key("default"), pv.Default)
		if (pv.Kind == "reliable") && len(pv.Fallbacks) == 0 {
			s.errAtKey(base, "provider %s is reliable but has no fallbacks", n)
		}
		if pv.Kind == "router" && pv.Default == "" && len(pv.Routes) == 0 {
			s.errAtKey(base, "provider %s is a router without routes or default", n)
		}
	}
}

// checkHeaders checks the names of every provider's headers as the file
// writes them, so that a credential header is reported even when another
// problem in its [providers.NAME] section keeps the section from being
// decoded.
func (s *source) checkHeaders() {
	providers, _ := s.tree["providers"].(map[string]any)
	for _, n := range slices.Sorted(maps.Keys(providers)) {
		pv, _ := providers[n].(map[string]any)
		headers, _ := pv["headers"].(map[string]any) // decode reports a non-table
		base := joinKey(joinKey("providers", n), "headers")
		for _, h := range slices.Sorted(maps.Keys(headers)) {
			hk := joinKey(base, h)
			if !headerShape.MatchString(h) {
				s.errAtKey(hk, "%q is not an HTTP header name", h)
			}
			if credentialHeader(h) {
				// Never echo the value: it is the credential.
				s.errAtKey(hk, "a header named like a credential does not belong in the config; "+
					"put the key in an environment variable and name the variable in api_key_env")
			}
		}
	}
}

// hasUnder reports whether path, or any key below it, is written in the
// file (a [table] header counts).
func (s *source) hasUnder(path string) bool {
	for _, m := range []map[string]pos{s.keys, s.vals} {
		for k := range m {
			if k == path || strings.HasPrefix(k, path+".") {
				return true
			}
		}
	}
	return false
}

// errAtKey reports a problem at the key of path.
func (s *source) errAtKey(path, format string, args ...any) {
	p := s.keyPos(path)
	s.errs.List = append(s.errs.List, &Error{File: s.name, Line: p.line, Col: p.col, Key: path, Msg: fmt.Sprintf(format, args...)})
}

// has reports whether path is written in the file.
func (s *source) has(path string) bool {
	_, ok := s.vals[path]
	return ok
}

func (s *source) checkName(path, v string) {
	if !s.has(path) {
		return
	}
	if v == "" {
		s.errAtVal(path, "must not be empty")
		return
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			s.errAtVal(path, "must not contain control characters")
			return
		}
	}
}

func (s *source) checkPaths(path string, vs []string, pattern bool) {
	for i, v := range vs {
		s.checkPath(fmt.Sprintf("%s[%d]", path, i), v, pattern)
	}
}

// checkPath checks the form of a path before expansion: it must be absolute,
// start with ~/ or a $VAR, or (for patterns) start with **/.
func (s *source) checkPath(path, v string, pattern bool) {
	if !s.has(path) {
		return
	}
	s.errForm(path, v, pathForm(v, pattern))
}

// errForm reports msg, what is wrong with the form of value v at path, if
// any; an empty value is not shown.
func (s *source) errForm(path, v, msg string) {
	switch {
	case msg == "":
	case v == "":
		s.errAtVal(path, "%s", msg)
	default:
		s.errAtVal(path, "%s %s", show(path, v), msg)
	}
}

// checkWorkspacePaths checks a list of paths relative to the workspace:
// each names one file or directory in it, literally and cleanly.
func (s *source) checkWorkspacePaths(path string, vs []string) {
	if !s.has(path) {
		return
	}
	for i, v := range vs {
		p := fmt.Sprintf("%s[%d]", path, i)
		s.errForm(p, v, workspacePathForm(v))
	}
}

func workspacePathForm(v string) string {
	switch {
	case v == "":
		return "must not be empty"
	case strings.ContainsRune(v, 0):
		return "contains a NUL byte"
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~"), strings.HasPrefix(v, "$"):
		return "is not relative to the workspace; write a path like \".vscode/settings.json\""
	case strings.ContainsAny(v, "*?[{\\"):
		return "is a pattern; list each path literally (a directory covers what is under it)"
	case slices.Contains(strings.Split(v, "/"), ".."):
		return "leaves the workspace with .."
	case v == ".":
		return "names the whole workspace; list the files that may run code outside the sandbox"
	case path.Clean(v) != v:
		return fmt.Sprintf("is not a clean path; write %q", path.Clean(v))
	}
	return ""
}

func pathForm(v string, pattern bool) string {
	switch {
	case v == "":
		return "must not be empty"
	case strings.ContainsRune(v, 0):
		return "contains a NUL byte"
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "$"), v == "~", strings.HasPrefix(v, "~/"):
		return ""
	case pattern && (v == "**" || strings.HasPrefix(v, "**/")):
		return ""
	case strings.HasPrefix(v, "~"):
		return "uses ~user, which is not supported; write ~/… or an absolute path"
	}
	if pattern {
		return "is a relative path; write an absolute path, ~/…, $VAR/… or a **/ pattern"
	}
	return "is a relative path; write an absolute path, ~/… or $VAR/…"
}

func (s *source) checkCommands(path string, vs []string) {
	if !s.has(path) {
		return
	}
	for i, v := range vs {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case v == "":
			s.errAtVal(p, "must not be empty")
		case strings.Contains(v, "/"):
			s.errAtVal(p, "%s is a path; write the command name only, like \"git\"", show(p, v))
		case !commandShape.MatchString(v):
			s.errAtVal(p, "%s is not a command name (letters, digits, and . _ + - @ :)", show(p, v))
		}
	}
}

func (s *source) checkDuration(path string, d Duration, most time.Duration) {
	if !s.has(path) {
		return
	}
	if d.Duration <= 0 {
		s.errAtVal(path, "must be positive, got %s", d.Duration)
	} else if d.Duration > most {
		s.errAtVal(path, "must be at most %s, got %s", most, d.Duration)
	}
}

func (s *source) checkRange(path string, v, lo, hi int) {
	if !s.has(path) {
		return
	}
	switch {
	case v < 0 && lo >= 0:
		s.errAtVal(path, "must not be negative, got %d", v)
	case v < lo:
		s.errAtVal(path, "must be at least %d, got %d", lo, v)
	case v > hi:
		s.errAtVal(path, "must be at most %d, got %d", hi, v)
	}
}

// checkCIDR returns what is wrong with an allow_private_cidrs entry, or
// "": a prefix in its masked form, or one address.
func checkCIDR(v string) string {
	if a, err := netip.ParseAddr(v); err == nil && a.Zone() == "" {
		return ""
	}
	p, err := netip.ParsePrefix(v)
	switch {
	case err != nil:
		return `is not a CIDR prefix like "10.0.0.0/8" or an address`
	case p.Masked() != p:
		return fmt.Sprintf("has bits set after the prefix length; write %q", p.Masked().String())
	case p.Bits() == 0:
		return "opens every address; list the private ranges you need"
	case p.Addr().Is4In6():
		return "is an IPv4-mapped prefix; write the IPv4 prefix"
	}
	return ""
}

// checkDomains checks each host of an allowlist (allowed_domains,
// allowed_registries) and lowers its case.
func (s *source) checkDomains(key string, hosts []string) {
	if !s.has(key) {
		return
	}
	for i, d := range hosts {
		p := fmt.Sprintf("%s[%d]", key, i)
		if msg := checkDomain(d); msg != "" {
			s.errAtVal(p, "%s %s", show(p, d), msg)
		}
		hosts[i] = strings.ToLower(d)
	}
}

// checkDomain returns what is wrong with an allowed_domains entry, or "".
func checkDomain(d string) string {
	switch {
	case d == "*":
		return ""
	case d == "":
		return "is empty; write a host name like \"example.com\""
	case strings.Contains(d, "://"):
		return "has a scheme; write the host name only, like \"example.com\""
	case strings.ContainsAny(d, "/?#"):
		return "has a path; write the host name only, like \"example.com\""
	case strings.Contains(d, "@"):
		return "has user information; write the host name only"
	case strings.ContainsAny(d, ":[]"):
		return "has a port or is an IPv6 address; write the host name only (ports are sandbox.http_ports)"
	}
	host := strings.ToLower(strings.TrimPrefix(d, "*."))
	if strings.Contains(host, "*") {
		return "has a wildcard in the wrong place; write \"*\", \"example.com\" or \"*.example.com\""
	}
	if strings.HasSuffix(host, ".") {
		return "ends with a dot; write the host name without it"
	}
	if len(host) > 253 {
		return "is longer than 253 characters"
	}
	for _, l := range strings.Split(host, ".") {
		if !labelShape.MatchString(l) {
			return "is not a valid host name (labels of letters, digits and inner hyphens, separated by dots)"
		}
	}
	return ""
}

// checkPHC returns what is wrong with an argon2id PHC string, or "". It never
// includes the value.
func checkPHC(h string) string {
	const want = "is not an argon2id hash in PHC form ($argon2id$v=19$m=…,t=…,p=…$SALT$HASH); set it with 'claw passphrase set'"
	parts := strings.Split(h, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v=19" {
		return want
	}
	params := map[string]uint64{}
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || (k != "m" && k != "t" && k != "p") {
			return want
		}
		if _, dup := params[k]; dup {
			return want
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return want
		}
		params[k] = n
	}
	if len(params) != 3 {
		return want
	}
	if params["m"] < 8*params["p"] {
		return "has argon2id parameters that are too weak (m must be at least 8*p)"
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil {
		return want
	}
	if len(salt) < 8 || len(key) < 16 {
		return "has a salt shorter than 8 bytes or a hash shorter than 16 bytes"
	}
	return ""
}

// ParseSize parses a byte count with an optional K, M, G or T suffix (powers
// of 1024), as sandbox.memory_max is written.
func ParseSize(v string) (int64, error) {
	digits, unit, ok := splitSize(v)
	if !ok {
		return 0, fmt.Errorf("is not a size: write bytes with an optional K, M, G or T suffix, like \"512M\"")
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("is too large")
	}
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[unit]
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("is too large")
	}
	n <<= shift
	if n == 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return n, nil
}

// validateChannel checks one [channels.NAME] section: the keys that apply
// to it, and their values. It fills the defaults of the channels claw
// serve starts (a section replaces the defaults whole, so they are set
// here, once the section is known).
func (s *source) validateChannel(c *Config, name string) {
	base := joinKey("channels", name)
	key := func(k string) string { return joinKey(base, k) }
	ch := c.Channels[name]
	allowed, started := ChannelKeys[name]
	if !started {
		allowed = []string{"tools_allow"}
	}
	for _, k := range tomlNames(reflect.TypeFor[Channel]()) {
		if s.hasUnder(key(k)) && !slices.Contains(allowed, k) {
			s.errAtKey(key(k), "%s does not apply to [%s] (its keys: %s)", k, base, strings.Join(allowed, ", "))
		}
	}
	for _, t := range ch.ToolsAllow {
		if !slices.Contains(ToolNames, t) {
			s.errAtVal(key("tools_allow"), "%q is not a tool; the tools are %s", t, strings.Join(ToolNames, ", "))
		}
	}
	if s.has(key("autonomy")) && !slices.Contains(Autonomies, ch.Autonomy) {
		s.errAtVal(key("autonomy"), "%s is not one of %s", show(key("autonomy"), ch.Autonomy), strings.Join(Autonomies, ", "))
	}
	ids := func(k string, vs []string, re shape, what string) {
		for i, v := range vs {
			if p := fmt.Sprintf("%s[%d]", key(k), i); !re.MatchString(v) {
				s.errAtVal(p, "%s is not %s", show(p, v), what)
			}
		}
	}
	switch name {
	case ChannelBridge:
		if ch.TokenEnv == "" && !s.has(key("token_env")) {
			ch.TokenEnv = DefaultBridgeTokenEnv
		}
		if !s.has(key("buffer")) {
			ch.Buffer = DefaultBridgeBuffer
		}
		s.checkRange(key("buffer"), ch.Buffer, 1, 10000)
		switch {
		case ch.Listen == "":
			s.errAtKey(base, "[%s] needs listen, a loopback address like \"127.0.0.1:18801\"", base)
		case !loopbackAddr(ch.Listen):
			s.errAtVal(key("listen"), "%s is not a loopback host:port, like \"127.0.0.1:18801\"; the bridge only listens on this machine", show(key("listen"), ch.Listen))
		}
		ids("sessions", ch.Sessions, sessionShape, "a session id (letters, digits and . _ : -, at most 128)")
		ids("approver_ids", ch.ApproverIDs, approverShape, "an approver id like \"cli:alice\"")
		s.checkSources(c, key("sources"), ch)
	case ChannelPlanckClaw:
		if ch.Dir == "" {
			s.errAtKey(base, "[%s] needs dir, the directory of the FIFOs", base)
		}
		s.checkPath(key("dir"), ch.Dir, false)
		ids("approver_ids", ch.ApproverIDs, approverShape, "an approver id like \"cli:alice\"")
	case ChannelDiscord:
		ids("allowed_user_ids", ch.AllowedUserIDs, discordShape, "a Discord id (digits)")
		ids("allowed_channel_ids", ch.AllowedChannelIDs, discordShape, "a Discord id (digits)")
		ids("approver_ids", ch.ApproverIDs, discordShape, "a Discord id (digits)")
	}
	if s.has(key("token_env")) && !envNameShape.MatchString(ch.TokenEnv) {
		s.errAtVal(key("token_env"), "%s is not an environment variable name", show(key("token_env"), ch.TokenEnv))
	}
	c.Channels[name] = ch
}

// checkSources checks [channels.bridge] sources: each a listed session,
// mapped to "discord:CHANNEL_ID" with a [channels.discord] to ask in.
func (s *source) checkSources(c *Config, path string, ch Channel) {
	for _, sess := range slices.Sorted(maps.Keys(ch.Sources)) {
		p := joinKey(path, sess)
		if !slices.Contains(ch.Sessions, sess) {
			s.errAtKey(p, "%q is not one of [channels.bridge] sessions", sess)
		}
		id, ok := strings.CutPrefix(ch.Sources[sess], ChannelDiscord+":")
		switch _, discord := c.Channels[ChannelDiscord]; {
		case !ok || !discordShape.MatchString(id):
			s.errAtVal(p, "%s is not a source like \"discord:CHANNEL_ID\"", show(p, ch.Sources[sess]))
		case !discord:
			s.errAtVal(p, "%s needs a [channels.discord] section to ask in", show(p, ch.Sources[sess]))
		}
	}
}

// tomlNames lists the toml names of a struct type's fields.
func tomlNames(t reflect.Type) []string {
	return slices.Sorted(maps.Keys(tomlFields(t)))
}

// loopbackAddr reports whether addr is host:port with a loopback IP (or
// localhost) and a valid port.
func loopbackAddr(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return false // 0: any free port, which claw serve prints
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
