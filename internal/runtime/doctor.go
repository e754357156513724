package runtime

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/internal/redact"
	"github.com/clawsec/claw/internal/service"
	"github.com/clawsec/claw/receipts"
)

// DoctorReachTimeout bounds one reachability probe of a provider endpoint.
var DoctorReachTimeout = 3 * time.Second

// DoctorVerifyTimeout bounds the fast verification of the receipt log.
var DoctorVerifyTimeout = 30 * time.Second

// DoctorResult is what a check of claw doctor found: OK, or a problem and
// how to fix it. Skipped checks (nothing to check here) are neither.
type DoctorResult struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Skipped bool   `json:"skipped,omitempty"`
	Detail  string `json:"detail,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// DoctorState is what the checks share: the home, whether it exists, and
// the config (nil when it could not be loaded).
type DoctorState struct {
	Home       string
	HomeExists bool
	Path       string // of the config file; empty when it could not be found
	Cfg        *config.Config
	Missing    bool // no config file: defaults
	Err        error
}

// LoadDoctorState loads the config at path of the claw home home.
func LoadDoctorState(home, path string) DoctorState {
	s := DoctorState{Home: home, Path: path}
	if st, err := os.Stat(home); err == nil && st.IsDir() {
		s.HomeExists = true
	}
	s.Cfg, s.Missing, s.Err = config.LoadOrDefault(path, home)
	return s
}

// DoctorSkipped is a check with nothing to check here.
func DoctorSkipped(detail string) DoctorResult { return DoctorResult{Skipped: true, Detail: detail} }

// DoctorPassed is a check that found nothing wrong.
func DoctorPassed(detail string) DoctorResult {
	return DoctorResult{OK: true, Detail: redact.String(detail)}
}

// DoctorFailed is a check that found a problem, with its fix.
func DoctorFailed(detail, fix string) DoctorResult {
	return DoctorResult{Detail: redact.String(detail), Fix: fix}
}

// DoctorNotInitialised is the result of a check that needs the claw home.
func DoctorNotInitialised(s DoctorState) DoctorResult {
	return DoctorSkipped(fmt.Sprintf("no claw home at %s (run 'claw init')", s.Home))
}

// Plural is "1 word" or "n words".
func Plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// CheckConfig checks that the config file loads.
func CheckConfig(s DoctorState) DoctorResult {
	var errs *config.Errors
	switch {
	case errors.As(s.Err, &errs):
		first := ""
		if len(errs.List) > 0 {
			first = ": " + errs.List[0].Error()
		}
		return DoctorFailed(fmt.Sprintf("%s has %s%s", s.Path, Plural(len(errs.List), "problem"), first),
			"run 'claw config validate' to see every problem with its line")
	case s.Err != nil:
		return DoctorFailed(s.Err.Error(), "check --home, --config and $CLAW_HOME")
	case s.Missing:
		return DoctorSkipped(fmt.Sprintf("no config file at %s; the defaults apply (run 'claw init')", s.Path))
	}
	return DoctorPassed(s.Path)
}

// CheckReceiptKey checks the signing key in the keys directory dir (dirErr
// when it could not be found): present, private, a key.
func CheckReceiptKey(s DoctorState, dir string, dirErr error) DoctorResult {
	if !s.HomeExists {
		return DoctorNotInitialised(s)
	}
	if dirErr != nil {
		return DoctorFailed(dirErr.Error(), "set $CLAW_HOME or pass --home")
	}
	path := filepath.Join(dir, ReceiptKeyName)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return DoctorFailed("no receipt signing key at "+path+"; actions cannot run without one",
			"run 'claw keys generate' (or 'claw keys generate --unencrypted' for a service)")
	}
	if err != nil {
		return DoctorFailed(err.Error(), "check the permissions of "+dir)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return DoctorFailed(fmt.Sprintf("%s has mode %04o; other users can read the signing key", path, st.Mode().Perm()),
			"run 'chmod 600 "+path+"' and consider 'claw keys rotate'")
	}
	pemBytes, err := ReadSmall(path, 64<<10)
	if err != nil {
		return DoctorFailed(fmt.Sprintf("cannot read %s: %v", path, err), "check the owner and mode of "+path)
	}
	if receipts.IsEncryptedKey(pemBytes) {
		return DoctorPassed(path + " (encrypted; the passphrase is asked when actions run)")
	}
	if _, err := receipts.ParsePrivateKey(pemBytes, func() ([]byte, error) {
		return nil, errors.New("the key is encrypted")
	}); err != nil {
		return DoctorFailed(fmt.Sprintf("%s is not a usable signing key: %v", path, err),
			"restore it from a backup, or move it away and run 'claw keys generate'")
	}
	return DoctorPassed(path)
}

// CheckReceiptLog verifies the receipt log fast (hash chain and
// checkpoints) with the public keys of the keys directory keyDir.
func CheckReceiptLog(s DoctorState, keyDir string, keyDirErr error) DoctorResult {
	if !s.HomeExists {
		return DoctorNotInitialised(s)
	}
	if s.Cfg == nil {
		return DoctorSkipped("the config could not be loaded")
	}
	dir := s.Cfg.Receipts.Dir
	err := keyDirErr
	var keys []crypto.PublicKey
	if err == nil {
		keys, _, err = TrustedReceiptKeys(keyDir)
	}
	if err != nil {
		return DoctorFailed(err.Error(), "check the public keys in the keys directory ('claw keys show')")
	}
	ctx, cancel := context.WithTimeout(context.Background(), DoctorVerifyTimeout)
	defer cancel()
	rep, err := audit.Verify(ctx, dir, audit.Options{Keys: keys, Fast: true, MaxListed: 1})
	switch {
	case errors.Is(err, audit.ErrNoLog), errors.Is(err, fs.ErrNotExist):
		return DoctorSkipped("no receipts yet in " + dir)
	case err != nil:
		return DoctorFailed(fmt.Sprintf("cannot read the receipt log %s: %v", dir, err), "run 'claw audit verify' for details")
	case !rep.Verified:
		detail := fmt.Sprintf("%s: %s, %d problem(s)", dir, rep.Verdict, rep.ProblemCount)
		if len(rep.Problems) > 0 {
			detail += ": " + rep.Problems[0].String()
		}
		return DoctorFailed(detail, "run 'claw audit verify' to see every problem; keep the log as evidence")
	}
	return DoctorPassed(fmt.Sprintf("%d receipts, hash chain and checkpoints verified (fast: signatures not checked)", rep.Receipts))
}

// CheckProvider checks that the default provider can be built from the
// provider specs of the config.
func CheckProvider(s DoctorState, specs []provider.Spec) DoctorResult {
	if s.Cfg == nil {
		return DoctorSkipped("the config could not be loaded")
	}
	name := s.Cfg.DefaultProvider
	sec, ok := s.Cfg.Providers[name]
	if !ok {
		return DoctorFailed(fmt.Sprintf("default_provider %q is not a configured provider", name),
			"add a [providers."+name+"] section or change default_provider (see 'claw provider list')")
	}
	if _, err := provider.Build(specs, name, os.Getenv, logx.Discard()); err != nil {
		fix := provider.Hint(err)
		if fix == "" {
			fix = "see 'claw provider list' and 'claw config validate'"
		}
		return DoctorFailed(err.Error(), fix)
	}
	detail := fmt.Sprintf("%s (%s)", name, sec.Kind)
	if sec.APIKeyEnv != "" {
		detail += fmt.Sprintf(", key in $%s is set", sec.APIKeyEnv)
	}
	return DoctorPassed(detail)
}

// CheckProviderReachable makes one unauthenticated request to each
// endpoint of the default provider, unless offline.
func CheckProviderReachable(s DoctorState, offline bool) DoctorResult {
	if s.Cfg == nil {
		return DoctorSkipped("the config could not be loaded")
	}
	urls := networkEndpoints(s.Cfg, s.Cfg.DefaultProvider)
	if len(urls) == 0 {
		return DoctorSkipped("the default provider makes no network requests")
	}
	if offline {
		return DoctorSkipped("--offline")
	}
	var bad []string
	for _, u := range urls {
		if err := reach(u, DoctorReachTimeout); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return DoctorFailed(strings.Join(bad, "; "), "check base_url, DNS, proxies and firewalls; 'claw provider test' makes a full request")
	}
	return DoctorPassed(strings.Join(urls, ", "))
}

// networkEndpoints lists the base URLs the provider name (and its members)
// would reach, each once, in order.
func networkEndpoints(cfg *config.Config, name string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		p, ok := cfg.Providers[n]
		if !ok {
			return
		}
		switch p.Kind {
		case provider.KindReliable:
			for _, m := range p.Fallbacks {
				walk(m)
			}
		case provider.KindRouter:
			walk(p.Default)
			for _, k := range slices.Sorted(maps.Keys(p.Routes)) {
				walk(p.Routes[k])
			}
		case provider.KindOpenAI, "openai", provider.KindAnthropic:
			u := p.BaseURL
			if u == "" {
				u = provider.DefaultOpenAIBaseURL
				if p.Kind == provider.KindAnthropic {
					u = provider.DefaultAnthropicBaseURL
				}
			}
			if !seen["url:"+u] {
				seen["url:"+u] = true
				out = append(out, u)
			}
		}
	}
	walk(name)
	return out
}

// reach makes one unauthenticated GET to url: any HTTP answer (even 401 or
// 404) means the endpoint is reachable. No key is sent.
func reach(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%s: bad base_url: %v", url, err)
	}
	client := &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: timeout},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: no answer within %s", url, timeout)
		}
		return fmt.Errorf("%s: %v", url, unwrapURLError(err))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// CheckMemory opens the memory database, when there is one, and lists
// its conversations.
func CheckMemory(s DoctorState) DoctorResult {
	if s.Cfg == nil {
		return DoctorSkipped("the config could not be loaded")
	}
	path := s.Cfg.Agent.MemoryDB
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return DoctorSkipped("no memory file yet at " + path + " (the agent creates it)")
	}
	st, err := memory.Open(path, memory.WithRedactor(redact.String), memory.WithSecretFields(redact.SecretField))
	if err != nil {
		var se *memory.SchemaError
		if errors.As(err, &se) {
			return DoctorFailed(err.Error(), "this claw is older than the memory file: upgrade claw")
		}
		return DoctorFailed(err.Error(), "check the owner and mode of "+path+"; if it is damaged, move it away to start over")
	}
	defer st.Close()
	convs, err := st.Conversations(context.Background(), 0)
	if err != nil {
		return DoctorFailed(err.Error(), "the file may be damaged: move it away to start over")
	}
	return DoctorPassed(fmt.Sprintf("%s (%s)", path, Plural(len(convs), "conversation")))
}

// CheckPassphrase reports whether the passphrase gate is set, and fails
// while it is locked after wrong passphrases.
func CheckPassphrase(s DoctorState) DoctorResult {
	switch {
	case !s.HomeExists:
		return DoctorNotInitialised(s)
	case s.Err != nil || s.Cfg == nil:
		return DoctorSkipped("the config does not load (see the config check)")
	case s.Cfg.Security.PassphraseHash == "":
		return DoctorSkipped("no passphrase set: passphrase_for has no effect (set one with 'claw passphrase set')")
	}
	st, err := broker.PassphraseLock(filepath.Join(s.Home, "passphrase.state"))
	switch {
	case err != nil:
		return DoctorFailed(err.Error()+"; passphrase actions are denied", "remove the file to reset the lockout")
	case !st.IsZero():
		return DoctorFailed("locked after too many wrong passphrases, until "+st.UTC().Format(time.RFC3339)+"; passphrase actions are denied",
			"wait until then")
	}
	return DoctorPassed("set (argon2id), not locked")
}

// ServiceUnitDirs are where an installed claw.service is looked for.
var ServiceUnitDirs = []string{service.DefaultUnitDir, "/usr/local/lib/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}

// CheckServiceUnit finds an installed claw.service and scores its
// hardening with systemd-analyze when it is installed.
func CheckServiceUnit() DoctorResult {
	var path string
	var unit []byte
	for _, d := range ServiceUnitDirs {
		p := filepath.Join(d, service.UnitName)
		if b, err := os.ReadFile(p); err == nil {
			path, unit = p, b
			break
		}
	}
	if path == "" {
		return DoctorResult{Skipped: true, Detail: "claw.service is not installed (claw service install)"}
	}
	if strings.Contains(string(unit), "SystemCallFilter=") && !strings.Contains(string(unit), "landlock_restrict_self") {
		return DoctorResult{Detail: path + ": its SystemCallFilter lacks the Landlock calls, so claw serve refuses every action",
			Fix: "claw service install --force"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	score, _, err := service.Analyze(ctx, path)
	switch {
	case errors.Is(err, service.ErrNoAnalyzer):
		return DoctorResult{OK: true, Detail: path + " (systemd-analyze not installed: hardening not scored)"}
	case err != nil:
		return DoctorResult{Detail: fmt.Sprintf("%s: %v", path, err), Fix: "systemd-analyze security --offline=yes " + path}
	case score > service.MaxExposure:
		return DoctorResult{Detail: fmt.Sprintf("%s: exposure %.1f, above %.1f", path, score, service.MaxExposure),
			Fix: "claw service install --force (see systemd-analyze security --offline=yes " + path + ")"}
	}
	running := ""
	if !service.Running() {
		running = "; systemd is not running here"
	}
	return DoctorResult{OK: true, Detail: fmt.Sprintf("%s: exposure %.1f (at most %.1f)%s", path, score, service.MaxExposure, running)}
}

// CheckServeToken checks that the bearer token of claw serve is readable
// by its owner only.
func CheckServeToken(s DoctorState) DoctorResult {
	switch {
	case s.Err != nil && s.Path == "":
		return DoctorResult{Skipped: true, Detail: s.Err.Error()}
	case s.Err != nil:
		return DoctorResult{Skipped: true, Detail: "config does not load (see the config check)"}
	}
	tok := s.Cfg.Serve.TokenFile
	if tok == "" {
		return DoctorResult{Skipped: true, Detail: "no token file configured"}
	}
	fi, err := os.Lstat(tok)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return DoctorResult{Skipped: true, Detail: tok + " does not exist yet"}
	case err != nil:
		return DoctorResult{Detail: err.Error()}
	case !fi.Mode().IsRegular():
		return DoctorResult{Detail: tok + " is not a regular file", Fix: "remove it and run claw init"}
	case fi.Mode().Perm()&0o077 != 0:
		return DoctorResult{Detail: fmt.Sprintf("%s has mode %04o: others can read the serve token", tok, fi.Mode().Perm()),
			Fix: "chmod 600 " + tok}
	}
	return DoctorResult{OK: true, Detail: fmt.Sprintf("%s (mode %04o)", tok, fi.Mode().Perm())}
}
