package discord

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channel"
	"github.com/clawsec/claw/internal/channel/discord/discordtest"
	"github.com/clawsec/claw/internal/channeltest"
	"github.com/clawsec/claw/internal/config"
)

// TestOpenThroughTheBroker runs the channel as claw serve does: Open on
// an Env with a real gate, broker, receipt log and approvals queue. A
// turn's tool calls take the one path; an approval is asked on Discord,
// answered by code, and the receipts name the channel, the user and the
// approver.
func TestOpenThroughTheBroker(t *testing.T) {
	late := &LateApprover{}
	rig := channeltest.New(t, "discord", channeltest.Options{Autonomy: "supervised", Approver: late})
	env := rig.Env
	logs := &syncBuffer{}
	env.Log = slog.New(slog.NewTextHandler(logs, nil))
	// The turn the agent would take: a read that is allowed, then a
	// write that needs approval.
	env.Chat = func(ctx context.Context, user, conv, text string) (string, error) {
		now := env.Call(ctx, user, conv, "time", json.RawMessage(`{}`))
		w := env.Call(ctx, user, conv, "file_write", json.RawMessage(`{"path":"notes.txt","content":"hi"}`))
		return "time: " + now.Content + "\nwrite: " + w.Status, nil
	}
	fake := discordtest.New(token)
	defer fake.Close()
	sec := config.Channel{TokenEnv: "CLAW_TEST_DISCORD_TOKEN", AllowedUserIDs: []string{alice, bob}, ApproverIDs: []string{alice}}
	if _, err := Open(env, sec, func(string) string { return "" }, late); err == nil || !strings.Contains(err.Error(), "CLAW_TEST_DISCORD_TOKEN") {
		t.Fatalf("Open without a token = %v, want an error naming the variable", err)
	}
	getenv := func(k string) string { return map[string]string{"CLAW_TEST_DISCORD_TOKEN": token}[k] }
	ctx, stop := runOpened(t, env, sec, getenv, late, fake)
	wait := func(what string, cond func(*discordtest.State) bool) {
		t.Helper()
		if err := fake.Wait(ctx, cond); err != nil {
			t.Fatalf("waiting for %s: %v\n%s", what, err, logs.String())
		}
	}
	wait("connected", func(s *discordtest.State) bool { return s.Connected() })
	if err := fake.Send(ctx, dm(bob, dmBob, "write a note")); err != nil {
		t.Fatal(err)
	}
	var prompt string
	wait("the prompt", func(s *discordtest.State) bool {
		if p := s.Posted(); len(p) > 0 {
			prompt = p[0].Content
			return true
		}
		return false
	})
	code := codeRe.FindStringSubmatch(prompt)
	if code == nil || !strings.Contains(prompt, "tool: file_write") || !strings.Contains(prompt, `"path":"notes.txt"`) {
		t.Fatalf("prompt:\n%s", prompt)
	}
	if err := fake.Send(ctx, dm(alice, dmAlice, "no "+code[1])); err != nil {
		t.Fatal(err)
	}
	var reply string
	wait("the reply", func(s *discordtest.State) bool {
		for _, p := range s.Posted() {
			if p.ChannelID == dmBob && strings.HasPrefix(p.Content, "time: ") {
				reply = p.Content
				return true
			}
		}
		return false
	})
	if !strings.Contains(reply, "2026-11-27") || !strings.Contains(reply, "write: rejected") {
		t.Fatalf("reply = %q", reply)
	}
	stop()

	var approval, decisions int
	for _, b := range rig.Bodies(t) {
		if b.ActionID == "" {
			continue
		}
		if b.Channel != "discord" || b.User != bob {
			t.Errorf("receipt %d names channel %q user %q, want discord and %s", b.Seq, b.Channel, b.User, bob)
		}
		if b.Decision != nil {
			decisions++
		}
		if b.Approval != nil {
			approval++
			if b.Approval.By != "discord:"+alice || b.Approval.Result != "rejected" {
				t.Errorf("approval = %+v, want rejected by discord:%s", b.Approval, alice)
			}
		}
	}
	if decisions != 2 || approval != 1 {
		t.Errorf("%d decisions and %d approvals, want 2 and 1", decisions, approval)
	}
}

// runOpened opens the channel against fake (the base URL is all that
// differs from Discord) and runs it; stop (or the test's end) ends the
// run and waits for it.
func runOpened(t *testing.T, env *channel.Env, sec config.Channel, getenv func(string) string, late *LateApprover, fake *discordtest.Server) (ctx context.Context, stop func()) {
	t.Helper()
	bot, err := Open(env, sec, getenv, late, func(c *Config) { c.API = fake.API() })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return ctx, stop
}

// TestAskIn: another channel's approval (a bridge session's permission
// request) is asked in the Discord channel its source names, waits in the
// queue in that session's name for the Discord approvers only, and is
// decided by an approver's code. Without a running Bot it is refused.
func TestAskIn(t *testing.T) {
	const asks = "200000000000000009"
	late := &LateApprover{}
	req := broker.Request{Tool: "permission:Bash", Summary: "permission:Bash make test", Args: json.RawMessage(`{"command":"make test"}`),
		ActionSHA256: "sha256:" + strings.Repeat("ab", 32)}
	if ans, err := late.AskIn(context.Background(), asks, "bridge:s1", req); err == nil || ans.Result != approvals.StatusTimeout {
		t.Fatalf("AskIn without a bot = %+v, %v; want a refusal", ans, err)
	}
	rig := channeltest.New(t, "discord", channeltest.Options{Autonomy: "supervised", Approver: late})
	rig.Env.Chat = func(context.Context, string, string, string) (string, error) { return "", nil }
	fake := discordtest.New(token)
	defer fake.Close()
	sec := config.Channel{TokenEnv: "T", AllowedUserIDs: []string{alice}, ApproverIDs: []string{alice}}
	ctx, _ := runOpened(t, rig.Env, sec, func(string) string { return token }, late, fake)
	if err := fake.Wait(ctx, func(s *discordtest.State) bool { return s.Connected() }); err != nil {
		t.Fatal(err)
	}

	type result struct {
		ans broker.Answer
		err error
	}
	asked := make(chan result, 1)
	go func() {
		ans, err := late.AskIn(ctx, asks, "bridge:s1", req)
		asked <- result{ans, err}
	}()
	p, err := fake.WaitPost(ctx, 0, asks, regexp.MustCompile("tool: permission:Bash"))
	if err != nil {
		t.Fatal(err)
	}
	pending := rig.Env.Queue.Pending()
	if len(pending) != 1 || pending[0].Requester != "bridge:s1" || strings.Join(pending[0].Approvers, ",") != "discord:"+alice {
		t.Fatalf("pending = %+v, want one by bridge:s1 for discord:%s", pending, alice)
	}
	if err := fake.Send(ctx, dm(alice, asks, "yes "+discordtest.Code(p))); err != nil {
		t.Fatal(err)
	}
	r := <-asked
	if r.err != nil || r.ans.Result != approvals.StatusApproved || r.ans.By != "discord:"+alice {
		t.Fatalf("AskIn = %+v, %v; want approved by discord:%s", r.ans, r.err, alice)
	}
}
