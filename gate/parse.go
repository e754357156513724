package gate

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/clawsec/claw/policies"
)

// builtinPrefix names the built-in modules in the compiled set
// ("policies/main.rego"), apart from user modules ("user/…").
const builtinPrefix = "policies/"

// checkStages are the compiler stages that only check a policy and change
// nothing in it: unused or duplicate imports, keyword overrides, void
// calls, rule conflicts, undefined functions, recursion, types, unsafe
// and deprecated built-ins, the capabilities a policy needs. The built-in
// policies are embedded in the binary and pass every one of them
// (TestBuiltinsPassEveryCheck compiles them as OPA would and compares
// decisions), so a compile of the built-ins alone skips them: about a
// quarter of the compile time. The moment a user policy is loaded, every
// stage runs again, over the whole set: these stages are what rejects a
// user policy that calls a built-in outside the allowlist or recurses.
var checkStages = []ast.StageID{
	ast.StageCheckUnusedImports,
	ast.StageCheckKeywordOverrides,
	ast.StageCheckDuplicateImports,
	ast.StageCheckVoidCalls,
	ast.StageCheckRuleConflicts,
	ast.StageCheckUndefinedFuncs,
	ast.StageCheckRecursion,
	ast.StageCheckTypes,
	ast.StageCheckUnsafeBuiltins,
	ast.StageCheckDeprecatedBuiltins,
	ast.StageBuildRequiredCapabilities,
}

// parseModules parses policy sources (by module name) under the policy
// capabilities, on up to GOMAXPROCS goroutines, largest first.
func parseModules(src map[string]string) (map[string]*ast.Module, error) {
	names := make([]string, 0, len(src))
	for n := range src {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(src[b]), len(src[a])), cmp.Compare(a, b))
	})
	// Annotations are parsed here, in parallel, rather than in the
	// compiler's one-threaded metadata stage.
	opts := ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: policies.Capabilities(), ProcessAnnotation: true}
	workers := min(runtime.GOMAXPROCS(0), len(names))
	mods := make([]*ast.Module, len(names))
	errs := make([]error, len(names))
	next := make(chan int, len(names))
	for i := range names {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				mods[i], errs[i] = ast.ParseModuleWithOpts(names[i], src[names[i]], opts)
			}
		})
	}
	wg.Wait()
	out := make(map[string]*ast.Module, len(names))
	for i, n := range names {
		if errs[i] != nil {
			return nil, fmt.Errorf("%w: %v", ErrPolicy, errs[i])
		}
		out[n] = mods[i]
	}
	return out, nil
}

// builtinSources returns the built-in modules by their name in the
// compiled set.
func builtinSources() (map[string]string, error) {
	mods, err := policies.Modules()
	if err != nil {
		return nil, fmt.Errorf("%w: built-in policies: %v", ErrPolicy, err)
	}
	out := make(map[string]string, len(mods))
	for n, s := range mods {
		out[builtinPrefix+n] = s
	}
	return out, nil
}

var prefetch struct {
	mu      sync.Mutex
	started bool
	ch      chan prefetched
	resume  func() // ends the collector's pause the prefetch began
}

type prefetched struct {
	mods map[string]*ast.Module
	err  error
}

// Prefetch starts parsing the built-in policies in the background. A
// process that compiles the policies once and exits (claw gate test, a
// hook, claw agent -m) calls it first thing, so the parse overlaps its
// own start: reading the config, the kernel checks. The first compile
// afterwards takes the parsed modules; every later compile (a reload)
// parses again, since compiling rewrites the modules in place. Calling it
// more than once does nothing. The collector is held off from here until
// that compile ends (see pauseGC).
func Prefetch() {
	prefetch.mu.Lock()
	defer prefetch.mu.Unlock()
	if prefetch.started {
		return
	}
	prefetch.started = true
	prefetch.resume = pauseGC()
	ch := make(chan prefetched, 1)
	prefetch.ch = ch
	go func() {
		var p prefetched
		src, err := builtinSources()
		if err == nil {
			p.mods, err = parseModules(src)
		}
		p.err = err
		ch <- p
	}()
}

// parsedBuiltins returns the built-in modules parsed: the prefetched ones
// if a prefetch is waiting to be taken, otherwise parsed now.
func parsedBuiltins(src map[string]string) (map[string]*ast.Module, error) {
	prefetch.mu.Lock()
	ch, resume := prefetch.ch, prefetch.resume
	prefetch.ch, prefetch.resume = nil, nil
	prefetch.mu.Unlock()
	if ch != nil {
		p := <-ch
		resume() // the compile that takes it holds its own pause
		return p.mods, p.err
	}
	return parseModules(src)
}
