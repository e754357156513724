package delegate

import (
	"context"
	"strings"
	"testing"
)

// BenchmarkRelay is one hook call relayed through the spool to a server
// whose decision costs nothing: the relay's own cost per tool call of an
// external agent. BenchmarkRelayAnchor is the same decision called
// directly, the anchor it is read against.
func BenchmarkRelay(b *testing.B) {
	spool := benchSpool(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go serve(ctx, spool, func(context.Context, []byte) answer { return answer{} })
	for b.Loop() {
		if _, err := relay([]string{spool}, strings.NewReader(`{"tool_name":"Read"}`)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRelayAnchor(b *testing.B) {
	decide := func(context.Context, []byte) answer { return answer{} }
	for b.Loop() {
		decide(context.Background(), []byte(`{"tool_name":"Read"}`))
	}
}

func benchSpool(b *testing.B) string {
	b.Helper()
	b.Setenv("TMPDIR", b.TempDir())
	spool, err := (&Run{Exe: "/bin/true"}).makeSpool()
	if err != nil {
		b.Fatal(err)
	}
	return spool
}
