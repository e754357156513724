package grant

import (
	"reflect"
	"strings"
	"testing"

	"github.com/clawsec/claw/gate"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want Scope
		text string // Format of the result
		err  string
	}{
		{in: "tool=shell cmd=go:test path=/ws", want: Scope{Tool: "shell", Commands: []gate.GrantCommand{{Program: "go", Subcommand: "test"}}, Args: "any", Paths: []string{"/ws"}},
			text: "tool=shell cmd=go:test args=any path=/ws"},
		{in: `autonomy=supervised path="/a b" cmd=ls args=none tool=shell`, want: Scope{Tool: "shell", Commands: []gate.GrantCommand{{Program: "ls"}}, Args: "none", Paths: []string{"/a b"}, Autonomy: "supervised"},
			text: `tool=shell cmd=ls args=none path="/a b" autonomy=supervised`},
		{in: "tool=http host=api.github.com method=GET method=HEAD", want: Scope{Tool: "http", Hosts: []string{"api.github.com"}, Methods: []string{"GET", "HEAD"}},
			text: "tool=http host=api.github.com method=GET method=HEAD"},
		{in: "cmd=ls", err: "tool= is required"},
		{in: "tool=shell", err: "at least one cmd="},
		{in: "tool=shell tool=http cmd=ls", err: "given twice"},
		{in: "tool=shell cmd=ls path=ws", err: "clean absolute path"},
		{in: "tool=shell cmd=ls path=/ws/../etc", err: "clean absolute path"},
		{in: "tool=http host=*.example.com", err: "without port or wildcard"},
		{in: "tool=http host=Example.com", err: "lower-case"},
		{in: "tool=shell cmd=:x", err: "PROGRAM or PROGRAM:SUBCOMMAND"},
		{in: "tool=shell cmd=a:b:c", err: "PROGRAM or PROGRAM:SUBCOMMAND"},
		{in: "tool=shell cmd=ls args=some", err: "any or none"},
		{in: "tool=file_write cmd=ls", err: "for tool=shell"},
		{in: "tool=shell cmd=ls when=always", err: "unknown key"},
		{in: `tool=shell cmd=ls path="/ws`, err: "unterminated quote"},
		{in: "tool=shell cmd=ls\x00", err: "unprintable"},
		{in: "tool=shell cmd=ls autonomy=root", err: "readonly, supervised or full"},
		{in: "tool=shell cmd=ls " + strings.Repeat("path=/x ", 1000), err: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.in[:min(len(tt.in), 40)], func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if s := Format(got); s != tt.text {
				t.Fatalf("Format = %q, want %q", s, tt.text)
			}
			if again, err := Parse(Format(got)); err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("round trip: %+v %v", again, err)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	sc := Scope{Tool: "shell", Commands: []gate.GrantCommand{{Program: "go", Subcommand: "test"}, {Program: "ls"}}, Args: "any", Paths: []string{"/ws"}, Autonomy: "supervised"}
	want := "shell commands made only of `go test` or `ls`, with any arguments, reaching no network host, touching only paths under /ws, at supervised autonomy, when the policy would ask (never a denial or a passphrase)"
	if got := Describe(sc); got != want {
		t.Fatalf("Describe =\n%s\nwant\n%s", got, want)
	}
}
