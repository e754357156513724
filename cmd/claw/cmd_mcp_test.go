package main

import (
	"strings"
	"testing"
)

func TestUpstreamEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin",
		"HOME=/home/u",
		"CLAW_HOME=/home/u/.claw",
		"CLAW_KEY_PASSPHRASE_FILE=/run/secret",
		"ANTHROPIC_API_KEY=sk-test-PLANTED-0123456789abcdef",
		"GITHUB_TOKEN=for-the-upstream",
		"MY_KEY=x=y",
	}
	got := strings.Join(upstreamEnv(env, []string{"ANTHROPIC_API_KEY", "MY_KEY"}), "\n")
	for _, want := range []string{"PATH=/usr/bin", "HOME=/home/u", "GITHUB_TOKEN=for-the-upstream"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s missing from\n%s", want, got)
		}
	}
	for _, gone := range []string{"CLAW_", "PLANTED", "MY_KEY"} {
		if strings.Contains(got, gone) {
			t.Errorf("%s passed to the upstream:\n%s", gone, got)
		}
	}
	if len(env) != 7 || env[2] != "CLAW_HOME=/home/u/.claw" {
		t.Fatal("the input was modified")
	}
}

func TestWriteDiff(t *testing.T) {
	var b strings.Builder
	writeDiff(&b, []string{"a", "b", "c"}, []string{"a", "x", "c", "d"})
	want := "  a\n- b\n+ x\n  c\n+ d\n"
	if b.String() != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", b.String(), want)
	}
}
