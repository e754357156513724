package gate

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/bypass"
)

// TestBuiltinsPassEveryCheck compiles the built-in policies the way OPA
// does on its own (its own parse, every compiler stage) and the way claw
// does (parsed ahead with annotations, no check stages), and asks both
// for a decision on every action of the bypass corpus and the benchmark
// mix at every autonomy: the decisions must be identical, reasons and
// sandbox plan included.
func TestBuiltinsPassEveryCheck(t *testing.T) {
	ctx := context.Background()
	// The decisions are compared, not timed: a busy machine must not turn
	// one side into a timeout.
	opts := Options{Policy: testPolicy(), Home: "/home/u", Timeout: 30 * time.Second}
	full, err := compileWith(ctx, opts, true)
	if err != nil {
		t.Fatalf("built-in policies fail a compiler check: %v", err)
	}
	fast, err := compileWith(ctx, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	if full.digest != fast.digest {
		t.Fatalf("digests differ: %s %s", full.digest, fast.digest)
	}
	eFull := &Engine{opts: opts}
	eFull.cur.Store(full)
	eFast := &Engine{opts: opts}
	eFast.cur.Store(fast)

	actions := append([]Action(nil), benchActions...)
	names, err := fs.Glob(bypass.FS, "*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := bypass.FS.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := ParseCases(bytes.NewReader(b), n)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			actions = append(actions, c.Action)
		}
	}
	if len(actions) < 100 {
		t.Fatalf("only %d actions to compare", len(actions))
	}
	for _, autonomy := range []string{"readonly", "supervised", "full"} {
		c := testContext(autonomy)
		for _, a := range actions {
			want, err1 := eFull.Decide(ctx, a, c)
			got, err2 := eFast.Decide(ctx, a, c)
			if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %v: without the checks %+v (%v), with every check %+v (%v)", autonomy, a, got, err2, want, err1)
			}
		}
	}
}

// TestUserPoliciesAreChecked: with a user policy loaded, every check
// stage runs again, so what those stages alone catch is still refused.
func TestUserPoliciesAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{name: "built-in outside the allowlist", src: "deny contains x if {\n\tx := http.send({\"method\": \"get\", \"url\": \"http://127.0.0.1/\"})\n}\n", want: "http.send"},
		{name: "clock", src: "deny contains {\"id\": \"t\"} if time.now_ns() > 0\n", want: "time.now_ns"},
		{name: "recursion", src: "a if b\n\nb if a\n\ndeny contains {\"id\": \"r\"} if a\n", want: "recursive"},
		{name: "type error", src: "deny contains {\"id\": x} if x := concat(1, 2)\n", want: "concat"},
		{name: "rule conflict", src: "v := 1\n\nv(x) := x\n\ndeny contains {\"id\": \"c\"} if v == 1\n", want: "conflict"},
		{name: "unused import", src: "import data.claw.lib\n\ndeny contains {\"id\": \"u\"} if false\n", want: "import"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package claw.user.p\n\n"+tc.src), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := New(context.Background(), Options{Policy: testPolicy(), Home: "/home/u", UserPolicyDir: dir})
			if err == nil {
				t.Fatalf("user policy compiled:\n%s", tc.src)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestPrefetch: the prefetched parse is taken by the first compile only,
// and a compile after it (a reload) still works on fresh modules.
func TestPrefetch(t *testing.T) {
	Prefetch()
	Prefetch()
	ctx := context.Background()
	e, err := New(ctx, Options{Policy: testPolicy(), Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	prefetch.mu.Lock()
	left := prefetch.ch
	prefetch.mu.Unlock()
	if left != nil {
		t.Fatal("the prefetched parse was not taken by the first compile")
	}
	d1, err := e.Decide(ctx, shellAction("rm -rf /"), testContext("full"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	d2, err := e.Decide(ctx, shellAction("rm -rf /"), testContext("full"))
	if err != nil {
		t.Fatal(err)
	}
	if d1.Decision != Deny || !reflect.DeepEqual(d1, d2) {
		t.Fatalf("before reload %+v, after %+v", d1, d2)
	}
}
