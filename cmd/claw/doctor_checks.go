package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/internal/redact"
	"github.com/clawsec/claw/receipts"
)

// doctorOffline is claw doctor --offline: skip the checks that reach the
// network.
var doctorOffline bool

// doctorReachTimeout bounds one reachability probe of a provider endpoint.
var doctorReachTimeout = 3 * time.Second

// doctorVerifyTimeout bounds the fast verification of the receipt log.
var doctorVerifyTimeout = 30 * time.Second

func init() {
	doctorChecks = append(doctorChecks,
		doctorCheck{Name: "config", Run: checkConfig},
		doctorCheck{Name: "receipt key", Run: checkReceiptKey},
		doctorCheck{Name: "receipt log", Run: checkReceiptLog},
		doctorCheck{Name: "provider", Run: checkProvider},
		doctorCheck{Name: "provider reachable", Run: checkProviderReachable},
		doctorCheck{Name: "memory", Run: checkMemory},
		doctorCheck{Name: "workspace", Run: checkWorkspace},
		doctorCheck{Name: "tool programs", Run: checkToolPrograms},
	)
}

// doctorState is what the checks share: the home, whether it exists, and
// the config (nil when it could not be loaded).
type doctorState struct {
	home       string
	homeExists bool
	path       string
	cfg        *config.Config
	missing    bool // no config file: defaults
	err        error
}

func loadDoctorState(g *globals) doctorState {
	home, path, err := configPaths(g)
	if err != nil {
		return doctorState{err: err}
	}
	s := doctorState{home: home, path: path}
	if st, err := os.Stat(home); err == nil && st.IsDir() {
		s.homeExists = true
	}
	s.cfg, s.missing, s.err = config.LoadOrDefault(path, home)
	return s
}

func skipped(detail string) doctorResult { return doctorResult{Skipped: true, Detail: detail} }
func passed(detail string) doctorResult  { return doctorResult{OK: true, Detail: redact.String(detail)} }
func failed(detail, fix string) doctorResult {
	return doctorResult{Detail: redact.String(detail), Fix: fix}
}

// notInitialised is the result of a check that needs the claw home.
func notInitialised(s doctorState) doctorResult {
	return skipped(fmt.Sprintf("no claw home at %s (run 'claw init')", s.home))
}

func checkConfig(g *globals) doctorResult {
	s := loadDoctorState(g)
	var errs *config.Errors
	switch {
	case errors.As(s.err, &errs):
		first := ""
		if len(errs.List) > 0 {
			first = ": " + errs.List[0].Error()
		}
		return failed(fmt.Sprintf("%s has %s%s", s.path, configPlural(len(errs.List), "problem"), first),
			"run 'claw config validate' to see every problem with its line")
	case s.err != nil:
		return failed(s.err.Error(), "check --home, --config and $CLAW_HOME")
	case s.missing:
		return skipped(fmt.Sprintf("no config file at %s; the defaults apply (run 'claw init')", s.path))
	}
	return passed(s.path)
}

func checkReceiptKey(g *globals) doctorResult {
	s := loadDoctorState(g)
	if !s.homeExists {
		return notInitialised(s)
	}
	dir, err := receiptKeyDir(g)
	if err != nil {
		return failed(err.Error(), "set $CLAW_HOME or pass --home")
	}
	path := filepath.Join(dir, receiptKeyName)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return failed("no receipt signing key at "+path+"; actions cannot run without one",
			"run 'claw keys generate' (or 'claw keys generate --unencrypted' for a service)")
	}
	if err != nil {
		return failed(err.Error(), "check the permissions of "+dir)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return failed(fmt.Sprintf("%s has mode %04o; other users can read the signing key", path, st.Mode().Perm()),
			"run 'chmod 600 "+path+"' and consider 'claw keys rotate'")
	}
	pemBytes, err := readSmall(path, 64<<10)
	if err != nil {
		return failed(fmt.Sprintf("cannot read %s: %v", path, err), "check the owner and mode of "+path)
	}
	if receipts.IsEncryptedKey(pemBytes) {
		return passed(path + " (encrypted; the passphrase is asked when actions run)")
	}
	if _, err := receipts.ParsePrivateKey(pemBytes, func() ([]byte, error) {
		return nil, errors.New("the key is encrypted")
	}); err != nil {
		return failed(fmt.Sprintf("%s is not a usable signing key: %v", path, err),
			"restore it from a backup, or move it away and run 'claw keys generate'")
	}
	return passed(path)
}

func checkReceiptLog(g *globals) doctorResult {
	s := loadDoctorState(g)
	if !s.homeExists {
		return notInitialised(s)
	}
	if s.cfg == nil {
		return skipped("the config could not be loaded")
	}
	dir := s.cfg.Receipts.Dir
	keys, _, err := trustedReceiptKeys(g)
	if err != nil {
		return failed(err.Error(), "check the public keys in the keys directory ('claw keys show')")
	}
	ctx, cancel := context.WithTimeout(context.Background(), doctorVerifyTimeout)
	defer cancel()
	rep, err := audit.Verify(ctx, dir, audit.Options{Keys: keys, Fast: true, MaxListed: 1})
	switch {
	case errors.Is(err, audit.ErrNoLog), errors.Is(err, fs.ErrNotExist):
		return skipped("no receipts yet in " + dir)
	case err != nil:
		return failed(fmt.Sprintf("cannot read the receipt log %s: %v", dir, err), "run 'claw audit verify' for details")
	case !rep.Verified:
		detail := fmt.Sprintf("%s: %s, %d problem(s)", dir, rep.Verdict, rep.ProblemCount)
		if len(rep.Problems) > 0 {
			detail += ": " + rep.Problems[0].String()
		}
		return failed(detail, "run 'claw audit verify' to see every problem; keep the log as evidence")
	}
	return passed(fmt.Sprintf("%d receipts, hash chain and checkpoints verified (fast: signatures not checked)", rep.Receipts))
}

func checkProvider(g *globals) doctorResult {
	s := loadDoctorState(g)
	if s.cfg == nil {
		return skipped("the config could not be loaded")
	}
	name := s.cfg.DefaultProvider
	sec, ok := s.cfg.Providers[name]
	if !ok {
		return failed(fmt.Sprintf("default_provider %q is not a configured provider", name),
			"add a [providers."+name+"] section or change default_provider (see 'claw provider list')")
	}
	if _, err := provider.Build(providerSpecs(s.cfg), name, os.Getenv, logx.Discard()); err != nil {
		fix := provider.Hint(err)
		if fix == "" {
			fix = "see 'claw provider list' and 'claw config validate'"
		}
		return failed(err.Error(), fix)
	}
	detail := fmt.Sprintf("%s (%s)", name, sec.Kind)
	if sec.APIKeyEnv != "" {
		detail += fmt.Sprintf(", key in $%s is set", sec.APIKeyEnv)
	}
	return passed(detail)
}

func checkProviderReachable(g *globals) doctorResult {
	s := loadDoctorState(g)
	if s.cfg == nil {
		return skipped("the config could not be loaded")
	}
	urls := networkEndpoints(s.cfg, s.cfg.DefaultProvider)
	if len(urls) == 0 {
		return skipped("the default provider makes no network requests")
	}
	if doctorOffline {
		return skipped("--offline")
	}
	var bad []string
	for _, u := range urls {
		if err := reach(u, doctorReachTimeout); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return failed(strings.Join(bad, "; "), "check base_url, DNS, proxies and firewalls; 'claw provider test' makes a full request")
	}
	return passed(strings.Join(urls, ", "))
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
			for _, k := range sortedKeys(p.Routes) {
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

func checkMemory(g *globals) doctorResult {
	s := loadDoctorState(g)
	if s.cfg == nil {
		return skipped("the config could not be loaded")
	}
	path := s.cfg.Agent.MemoryDB
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return skipped("no memory file yet at " + path + " (the agent creates it)")
	}
	st, err := memory.Open(path, memory.WithRedactor(redact.String), memory.WithSecretFields(redact.SecretField))
	if err != nil {
		var se *memory.SchemaError
		if errors.As(err, &se) {
			return failed(err.Error(), "this claw is older than the memory file: upgrade claw")
		}
		return failed(err.Error(), "check the owner and mode of "+path+"; if it is damaged, move it away to start over")
	}
	defer st.Close()
	convs, err := st.Conversations(context.Background(), 0)
	if err != nil {
		return failed(err.Error(), "the file may be damaged: move it away to start over")
	}
	return passed(fmt.Sprintf("%s (%s)", path, configPlural(len(convs), "conversation")))
}

// checkWorkspace fails when actions could not use the workspace: missing,
// inside a forbidden path, or out of the run_as user's reach.
func checkWorkspace(g *globals) doctorResult {
	s := loadDoctorState(g)
	if !s.homeExists {
		return notInitialised(s)
	}
	if s.cfg == nil {
		return skipped("the config could not be loaded")
	}
	e := &env{home: s.home, cfg: s.cfg}
	e.userDir, _ = os.UserHomeDir()
	if problem, fix := workspaceIssue(context.Background(), e, s.cfg.WorkspaceDir); problem != "" {
		return failed(problem, fix)
	}
	detail := s.cfg.WorkspaceDir
	if _, _, ok, _ := runAsIDs(s.cfg.Sandbox.RunAs); ok {
		detail += " (actions run as " + s.cfg.Sandbox.RunAs + ")"
	}
	return passed(detail)
}

// checkToolPrograms fails when claw runs as root and the run_as user its
// tools switch to could not start claw or its helper.
func checkToolPrograms(g *globals) doctorResult {
	s := loadDoctorState(g)
	if s.cfg == nil {
		return skipped("the config could not be loaded")
	}
	runAs := s.cfg.Sandbox.RunAs
	if _, _, ok, _ := runAsIDs(runAs); !ok {
		return skipped("tools keep claw's own uid")
	}
	if problem, fix := programsProblem(runAs, executor.Check().Helper); problem != "" {
		return failed(problem, fix)
	}
	return passed("claw and its helper can be started by " + runAs)
}
