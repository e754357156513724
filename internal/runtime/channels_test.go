package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channel"
	"github.com/clawsec/claw/internal/config"
)

// askIn records where a sourceApprover asked.
type askIn struct{ place, requester string }

func (a *askIn) Approve(context.Context, broker.Request) (broker.Answer, error) {
	return broker.Answer{}, errors.New("not for this test")
}

func (a *askIn) AskIn(_ context.Context, place, requester string, _ broker.Request) (broker.Answer, error) {
	a.place, a.requester = place, requester
	return broker.Answer{Result: approvals.StatusApproved, By: "discord:1"}, nil
}

// TestSourceApprover: a session with a source is asked there, in its
// name; the others through the queue; a source that is not running, or
// no approver at all, is a refusal, not an approval.
func TestSourceApprover(t *testing.T) {
	ctx := context.Background()
	req := broker.Request{Tool: "permission:Bash", Summary: "permission:Bash make test", ActionSHA256: "sha256:" + strings.Repeat("0", 64)}
	discord := &askIn{}
	q := approvals.NewQueue(time.Minute)
	a := sourceApprover{name: "bridge", sources: map[string]string{"s1": "discord:42"},
		own: map[string]broker.Approver{"discord": discord}, rest: q.For("bridge", []string{"cli:alice"})}

	ans, err := a.Approve(broker.WithUser(ctx, "s1"), req)
	if err != nil || ans.Result != approvals.StatusApproved || discord.place != "42" || discord.requester != "bridge:s1" {
		t.Fatalf("s1: %+v, %v, asked %+v", ans, err, discord)
	}

	// s2 has no source: it waits in the queue, requested by bridge:s2
	wctx, cancel := context.WithCancel(broker.WithUser(ctx, "s2"))
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := a.Approve(wctx, req); done <- err }()
	deadline := time.After(10 * time.Second)
	for len(q.Pending()) == 0 {
		select {
		case err := <-done:
			t.Fatalf("s2's request never reached the queue: %v", err)
		case <-deadline:
			t.Fatal("s2's request never reached the queue")
		case <-time.After(time.Millisecond):
		}
	}
	if p := q.Pending()[0]; p.Requester != "bridge:s2" {
		t.Errorf("s2 requested as %q", p.Requester)
	}
	cancel()
	<-done

	a.own = map[string]broker.Approver{}
	if ans, err := a.Approve(broker.WithUser(ctx, "s1"), req); !errors.Is(err, channel.ErrNoSuchChannel) || ans.Result != approvals.StatusTimeout {
		t.Errorf("source not running: %+v, %v", ans, err)
	}
	a.rest = nil
	if ans, err := a.Approve(broker.WithUser(ctx, "s2"), req); !errors.Is(err, approvals.ErrNotAllowed) || ans.Result != approvals.StatusTimeout {
		t.Errorf("nobody to ask: %+v, %v", ans, err)
	}
}

// TestEverySessionSourced: approver_ids is needed unless every session
// has a source.
func TestEverySessionSourced(t *testing.T) {
	src := map[string]string{"s1": "discord:42"}
	for _, c := range []struct {
		sec  config.Channel
		want bool
	}{
		{config.Channel{Sessions: []string{"s1"}, Sources: src}, true},
		{config.Channel{Sessions: []string{"s1", "s2"}, Sources: src}, false},
		{config.Channel{}, false},
	} {
		if got := everySessionSourced(c.sec); got != c.want {
			t.Errorf("%+v: %v, want %v", c.sec, got, c.want)
		}
	}
}

// TestApproverNames: Discord's approver_ids are user ids, recorded as
// discord:ID; other channels' are names as written.
func TestApproverNames(t *testing.T) {
	if got := approverNames("discord", []string{"123", "456"}); strings.Join(got, ",") != "discord:123,discord:456" {
		t.Errorf("discord: %v", got)
	}
	if got := approverNames("bridge", []string{"cli:alice"}); strings.Join(got, ",") != "cli:alice" {
		t.Errorf("bridge: %v", got)
	}
}
