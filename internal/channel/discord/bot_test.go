package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channel/discord/discordtest"
)

const (
	token     = "fake-bot-token-0123456789"
	alice     = "100000000000000001" // allowed user and approver
	bob       = "100000000000000002" // allowed user, not an approver
	mallory   = "100000000000000003" // not allowed
	dmAlice   = "200000000000000001"
	dmBob     = "200000000000000002"
	dmMallory = "200000000000000003"
	guild     = "300000000000000001"
	general   = "400000000000000001" // allowed channel
	other     = "400000000000000002" // not allowed
)

// fakeClock never sleeps: a wait moves its time forward and is over.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// syncBuffer is a log sink tests read while the bot writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type rig struct {
	t     *testing.T
	fake  *discordtest.Server
	bot   *Bot
	queue *approvals.Queue
	clock *fakeClock
	logs  *syncBuffer
	turns chan Turn
	done  chan error
	ctx   context.Context
}

// newRig runs a bot against a fake Discord. turn answers each turn; nil
// echoes the message.
func newRig(t *testing.T, turn TurnFunc, opts ...func(*Config)) *rig {
	t.Helper()
	fake := discordtest.New(token)
	fake.HeartbeatInterval = 100 * time.Millisecond
	t.Cleanup(fake.Close)
	r := &rig{t: t, fake: fake, queue: approvals.NewQueue(time.Minute), clock: &fakeClock{now: time.Unix(1_800_000_000, 0)},
		logs: &syncBuffer{}, turns: make(chan Turn, 16), done: make(chan error, 1)}
	if turn == nil {
		turn = func(ctx context.Context, tr Turn) (string, string, error) { return "echo: " + tr.Message, "conv1", nil }
	}
	cfg := Config{
		Token: token, AllowedUsers: []string{alice, bob}, AllowedChannels: []string{general}, Approvers: []string{alice},
		API: fake.API(), Clock: r.clock, Logger: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Queue: r.queue,
		Turn: func(ctx context.Context, tr Turn) (string, string, error) {
			r.turns <- tr
			return turn(ctx, tr)
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.bot = b
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	r.ctx = ctx
	go func() { r.done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("the bot did not stop")
		}
	})
	r.wait("connected", func(s *discordtest.State) bool { return s.Connected() })
	return r
}

func (r *rig) wait(what string, cond func(*discordtest.State) bool) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	if err := r.fake.Wait(ctx, cond); err != nil {
		r.t.Fatalf("waiting for %s: %v\nlog:\n%s", what, err, r.logs.String())
	}
}

func (r *rig) send(m discordtest.MessageCreate) {
	r.t.Helper()
	if err := r.fake.Send(r.ctx, m); err != nil {
		r.t.Fatal(err)
	}
}

// waitLog waits for the bot's log to contain s: messages of different
// channels are handled concurrently, so a later post says nothing of an
// earlier message's log line.
func (r *rig) waitLog(s string) {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(r.logs.String(), s); {
		if time.Now().After(deadline) {
			r.t.Fatalf("the log lacks %q:\n%s", s, r.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// posts waits for n posted messages and returns them.
func (r *rig) posts(n int) []discordtest.Posted {
	r.t.Helper()
	var out []discordtest.Posted
	r.wait("posted messages", func(s *discordtest.State) bool { out = s.Posted(); return len(out) >= n })
	return out
}

func (r *rig) nextTurn() Turn {
	r.t.Helper()
	select {
	case tr := <-r.turns:
		return tr
	case <-time.After(10 * time.Second):
		r.t.Fatalf("no turn\nlog:\n%s", r.logs.String())
	}
	return Turn{}
}

func dm(user, channel, text string) discordtest.MessageCreate {
	return discordtest.MessageCreate{ChannelID: channel, AuthorID: user, Content: text}
}

func TestAnswersAllowedUsersOnly(t *testing.T) {
	r := newRig(t, nil)
	// Everything the bot must ignore, then one message it must answer:
	// messages are handled in order, so when that one's turn comes the
	// others have been seen.
	ignored := []discordtest.MessageCreate{
		dm(mallory, dmMallory, "list files"),
		{ChannelID: general, GuildID: guild, AuthorID: mallory, Content: "<@" + discordtest.BotID + "> list files", Mentions: []string{discordtest.BotID}},
		{ChannelID: other, GuildID: guild, AuthorID: alice, Content: "<@" + discordtest.BotID + "> list files", Mentions: []string{discordtest.BotID}},
		{ChannelID: general, GuildID: guild, AuthorID: alice, Content: "list files"}, // not mentioned
		{ChannelID: dmAlice, AuthorID: "100000000000000009", Bot: true, Content: "list files"},
		{ChannelID: general, GuildID: guild, AuthorID: "100000000000000008", WebhookID: "500000000000000001", Content: "<@" + discordtest.BotID + "> hi", Mentions: []string{discordtest.BotID}},
		{ChannelID: dmAlice, AuthorID: discordtest.BotID, Content: "echo: loop"},
	}
	for _, m := range ignored {
		r.send(m)
	}
	r.send(discordtest.MessageCreate{ChannelID: general, GuildID: guild, AuthorID: bob, Content: "<@" + discordtest.BotID + "> list files", Mentions: []string{discordtest.BotID}})
	tr := r.nextTurn()
	if tr.UserID != bob || tr.ChannelID != general || tr.Message != "list files" {
		t.Fatalf("turn = %+v, want bob's message without the mention", tr)
	}
	p := r.posts(1)
	if p[0].ChannelID != general || p[0].Content != "echo: list files" {
		t.Errorf("reply = %+v", p[0])
	}
	if string(p[0].AllowedMentions) != `{"parse":[]}` {
		t.Errorf("allowed_mentions = %s, want {\"parse\":[]}", p[0].AllowedMentions)
	}
	r.wait("typing", func(s *discordtest.State) bool { return s.Typing(general) >= 1 })
	r.send(dm(alice, dmAlice, "hello"))
	if tr := r.nextTurn(); tr.UserID != alice || tr.Message != "hello" {
		t.Fatalf("DM turn = %+v", tr)
	}
	select {
	case tr := <-r.turns:
		t.Fatalf("an ignored message made a turn: %+v", tr)
	default:
	}
	r.waitLog("not allowed ignored")
	r.waitLog("user_id=" + mallory)
}

func TestEmptyAllowlistIsNobody(t *testing.T) {
	r := newRig(t, nil, func(c *Config) { c.AllowedUsers, c.AllowedChannels = nil, nil })
	r.send(dm(alice, dmAlice, "hello"))
	r.send(discordtest.MessageCreate{ChannelID: general, GuildID: guild, AuthorID: alice, Content: "<@" + discordtest.BotID + "> hi", Mentions: []string{discordtest.BotID}})
	r.wait("the messages logged", func(*discordtest.State) bool { return strings.Count(r.logs.String(), "not allowed ignored") >= 1 })
	select {
	case tr := <-r.turns:
		t.Fatalf("empty allowlists let a turn through: %+v", tr)
	case <-time.After(200 * time.Millisecond):
	}
}

// askTurn makes a turn that asks for an approval, as the broker does, and
// reports the answer.
func askTurn(answers chan<- broker.Answer, req broker.Request) TurnFunc {
	return func(ctx context.Context, tr Turn) (string, string, error) {
		a, err := approverOf(ctx).Approve(ctx, req)
		if err != nil {
			answers <- broker.Answer{Result: "error: " + err.Error()}
			return "", "", err
		}
		answers <- a
		return "it was " + a.Result, "conv", nil
	}
}

type approverKey struct{}

func approverOf(ctx context.Context) broker.Approver {
	return ctx.Value(approverKey{}).(broker.Approver)
}

var codeRe = regexp.MustCompile("Reply `yes ([a-z]{5})`")

func testRequest(args string) broker.Request {
	return broker.Request{
		ActionID: "act1", Tool: "shell", Summary: "rm -rf build",
		Args:         json.RawMessage(args),
		Decision:     gate.Decision{Decision: "ask", Risk: "medium", Reasons: []gate.Reason{{ID: "cmd.rm.workspace", Msg: "rm inside the workspace needs approval \x1b[31m"}}, Sandbox: gate.SandboxPlan{Read: []string{"/ws"}, Write: []string{"/ws"}}},
		ActionSHA256: "sha256:" + strings.Repeat("ab", 32),
	}
}

func TestApprovalByCode(t *testing.T) {
	answers := make(chan broker.Answer, 4)
	req := testRequest(`{"command":"rm -rf build ` + "```" + ` @everyone \u001b[31m"}`)
	var r *rig
	r = newRig(t, func(ctx context.Context, tr Turn) (string, string, error) {
		return askTurn(answers, req)(context.WithValue(ctx, approverKey{}, r.bot), tr)
	})
	r.send(dm(bob, dmBob, "clean the build"))
	r.nextTurn()
	prompt := r.posts(1)[0]
	if prompt.ChannelID != dmBob {
		t.Fatalf("the prompt went to %s, not where the turn came from", prompt.ChannelID)
	}
	m := codeRe.FindStringSubmatch(prompt.Content)
	if m == nil {
		t.Fatalf("no code in the prompt:\n%s", prompt.Content)
	}
	code := m[1]
	for _, want := range []string{"tool: shell", "risk: medium", "rule cmd.rm.workspace", `\x1b[31m`, `\x60\x60\x60`, "no " + code} {
		if !strings.Contains(prompt.Content, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt.Content)
		}
	}
	if strings.Contains(prompt.Content, "\x1b") || strings.Count(prompt.Content, "```") != 2 {
		t.Errorf("prompt is not escaped:\n%q", prompt.Content)
	}
	if len(r.queue.Pending()) != 1 {
		t.Fatalf("the request is not in the approvals queue")
	}

	// bob may talk to the bot but not approve: ignored and logged
	r.send(dm(bob, dmBob, "yes "+code))
	r.waitLog("not an approver ignored")
	// a wrong code from the approver is refused
	wrong := "aaaaa"
	if wrong == code {
		wrong = "bbbbb"
	}
	r.send(dm(alice, dmAlice, "yes "+wrong))
	if p := r.posts(2)[1]; p.ChannelID != dmAlice || !strings.Contains(p.Content, "No action is waiting for code "+wrong) {
		t.Fatalf("wrong code answer = %+v", p)
	}
	if len(r.queue.Pending()) != 1 {
		t.Fatal("a refused answer decided the request")
	}
	// the approver, by DM, in capitals
	r.send(dm(alice, dmAlice, "YES "+strings.ToUpper(code)))
	select {
	case a := <-answers:
		if a.Result != "approved" || a.By != "discord:"+alice {
			t.Fatalf("answer = %+v, want approved by discord:%s", a, alice)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	// a replay is refused
	r.send(dm(alice, dmAlice, "no "+code))
	r.wait("the replay's answer", func(s *discordtest.State) bool {
		for _, p := range s.Posted() {
			if strings.Contains(p.Content, "Code "+code+" is no longer pending") {
				return true
			}
		}
		return false
	})
}

func TestApprovalLateAnswerRefused(t *testing.T) {
	answers := make(chan broker.Answer, 4)
	var r *rig
	r = newRig(t, func(ctx context.Context, tr Turn) (string, string, error) {
		ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond) // the broker's approval timeout
		defer cancel()
		return askTurn(answers, testRequest(`{"command":"rm -rf build"}`))(context.WithValue(ctx, approverKey{}, r.bot), tr)
	})
	r.send(dm(alice, dmAlice, "clean"))
	code := codeRe.FindStringSubmatch(r.posts(1)[0].Content)[1]
	select {
	case a := <-answers:
		if !strings.Contains(a.Result, "deadline exceeded") {
			t.Fatalf("answer = %+v, want the wait to end with its context", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end")
	}
	if n := len(r.queue.Pending()); n != 0 {
		t.Fatalf("%d requests still pending after the wait ended", n)
	}
	r.send(dm(alice, dmAlice, "yes "+code))
	r.wait("the late answer's refusal", func(s *discordtest.State) bool {
		for _, p := range s.Posted() {
			if strings.Contains(p.Content, "Code "+code+" is no longer pending") {
				return true
			}
		}
		return false
	})
}

func TestLongReplyIsSplit(t *testing.T) {
	var b strings.Builder
	b.WriteString("Here is the listing:\n```go\n")
	for i := 0; b.Len() < 5000; i++ {
		b.WriteString("fmt.Println(\"line of code number " + strings.Repeat("x", i%40) + "\")\n")
	}
	b.WriteString("```\nDone.")
	long := b.String()
	r := newRig(t, func(context.Context, Turn) (string, string, error) { return long, "c", nil })
	r.send(dm(alice, dmAlice, "show me"))
	r.nextTurn()
	var ps []discordtest.Posted
	r.wait("three or more messages ending in Done.", func(s *discordtest.State) bool {
		ps = s.Posted()
		return len(ps) >= 3 && strings.HasSuffix(ps[len(ps)-1].Content, "Done.")
	})
	for i, p := range ps {
		if units(p.Content) > 2000 {
			t.Errorf("message %d has %d characters", i, units(p.Content))
		}
		if strings.Count(p.Content, "```")%2 != 0 {
			t.Errorf("message %d leaves a code block open:\n%s", i, p.Content)
		}
		if i > 0 && i < len(ps)-1 && !strings.HasPrefix(p.Content, "```go\n") {
			t.Errorf("message %d does not reopen the go block", i)
		}
	}
}

func TestRateLimitIsWaitedOut(t *testing.T) {
	r := newRig(t, nil)
	r.fake.RateLimitNext(2.5)
	r.send(dm(alice, dmAlice, "hi"))
	p := r.posts(1)
	if p[0].Content != "echo: hi" {
		t.Fatalf("reply = %q", p[0].Content)
	}
	r.fake.Snapshot(func(s *discordtest.State) {
		if s.RateLimited() != 1 {
			t.Errorf("the fake answered 429 %d times, want 1", s.RateLimited())
		}
	})
	found := false
	for _, w := range r.clock.Waits() {
		found = found || w == 2500*time.Millisecond
	}
	if !found {
		t.Errorf("the client did not wait retry_after (2.5s); waits: %v", r.clock.Waits())
	}
}

func TestResumeAfterReconnect(t *testing.T) {
	r := newRig(t, nil)
	if err := r.fake.Reconnect(r.ctx); err != nil {
		t.Fatal(err)
	}
	r.wait("a resume", func(s *discordtest.State) bool { return s.Resumes() == 1 && s.Connected() })
	r.send(dm(alice, dmAlice, "still there?"))
	if p := r.posts(1); p[0].Content != "echo: still there?" {
		t.Fatalf("reply after resume = %q", p[0].Content)
	}
	r.fake.Snapshot(func(s *discordtest.State) {
		if s.Identifies() != 1 {
			t.Errorf("identified %d times; a resume keeps the session", s.Identifies())
		}
	})
}

func TestZombieConnectionResumes(t *testing.T) {
	r := newRig(t, nil)
	r.fake.WithholdACKs(true)
	r.wait("a resume after the missing ACK", func(s *discordtest.State) bool { return s.Resumes() >= 1 })
	r.fake.WithholdACKs(false)
	r.fake.Snapshot(func(s *discordtest.State) {
		for _, c := range s.ClientCloses() {
			if c == 1000 || c == 1001 {
				t.Errorf("the client closed with %d, which ends the session", c)
			}
		}
	})
}

func TestInvalidSessionIdentifiesAgain(t *testing.T) {
	r := newRig(t, nil)
	if err := r.fake.InvalidSession(r.ctx, false); err != nil {
		t.Fatal(err)
	}
	r.wait("a second identify", func(s *discordtest.State) bool { return s.Identifies() == 2 && s.Connected() })
	r.send(dm(alice, dmAlice, "again"))
	if p := r.posts(1); p[0].Content != "echo: again" {
		t.Fatalf("reply = %q", p[0].Content)
	}
}

func TestFatalCloseStops(t *testing.T) {
	tests := []struct {
		name, token string
		noContent   bool
		code        int
		msg         string
	}{
		{name: "wrong token", token: "a-wrong-token", code: 4004, msg: "authentication failed"},
		{name: "content intent off in the portal", token: "the-right-token", noContent: true, code: 4014, msg: "enable MESSAGE CONTENT INTENT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := discordtest.New("the-right-token")
			fake.NoContentIntent = tt.noContent
			defer fake.Close()
			b, err := New(Config{Token: tt.token, AllowedUsers: []string{alice}, API: fake.API(), Clock: &fakeClock{},
				Queue: approvals.NewQueue(time.Minute), Turn: func(context.Context, Turn) (string, string, error) { return "", "", nil }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = b.Run(ctx)
			var ce *CloseError
			if !errors.As(err, &ce) || ce.Code != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Run = %v, want a %d CloseError saying %q", err, tt.code, tt.msg)
			}
			fake.Snapshot(func(s *discordtest.State) {
				if s.Dials() != 1 {
					t.Errorf("the client connected %d times; after %d it must not reconnect", s.Dials(), tt.code)
				}
			})
			if strings.Contains(err.Error(), tt.token) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

func TestNewRefusesBadIDs(t *testing.T) {
	_, err := New(Config{Token: "t", AllowedUsers: []string{"alice"}, Queue: approvals.NewQueue(0),
		Turn: func(context.Context, Turn) (string, string, error) { return "", "", nil }})
	if err == nil || !strings.Contains(err.Error(), "not a Discord id") {
		t.Fatalf("New = %v, want a refusal of a non-snowflake id", err)
	}
}

func TestEstopFromAnApprover(t *testing.T) {
	engaged := make(chan string, 2)
	stopped := false
	var mu sync.Mutex
	r := newRig(t, nil, func(c *Config) {
		c.Estop = func(_ context.Context, by string) error {
			mu.Lock()
			stopped = true
			mu.Unlock()
			engaged <- by
			return nil
		}
		c.Stopped = func() bool { mu.Lock(); defer mu.Unlock(); return stopped }
	})
	// bob may talk but not stop: his "estop" is a message like any other
	r.send(dm(bob, dmBob, "estop"))
	if tr := r.nextTurn(); tr.Message != "estop" {
		t.Fatalf("bob's message = %+v, want a turn", tr)
	}
	r.send(dm(alice, dmAlice, "ESTOP"))
	select {
	case by := <-engaged:
		if by != "discord:"+alice {
			t.Fatalf("engaged by %q", by)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the approver's estop did not engage the stop")
	}
	r.wait("the estop's answer", func(s *discordtest.State) bool {
		for _, p := range s.Posted() {
			if p.ChannelID == dmAlice && strings.HasPrefix(p.Content, "Emergency stop engaged") {
				return true
			}
		}
		return false
	})
	// while the stop is engaged a message gets no turn, and says why
	r.send(dm(bob, dmBob, "list files"))
	r.wait("the stop's answer", func(s *discordtest.State) bool {
		for _, p := range s.Posted() {
			if p.ChannelID == dmBob && strings.Contains(p.Content, "emergency stop is engaged") {
				return true
			}
		}
		return false
	})
	select {
	case tr := <-r.turns:
		t.Fatalf("a turn ran while the stop was engaged: %+v", tr)
	default:
	}
}

func TestBadFrameIsDroppedNotTheSession(t *testing.T) {
	r := newRig(t, nil)
	for _, raw := range []string{`{"op":0,"t":"MESSAGE_CREATE","s":7,"d":{"id":"x","channel_id":"1","author":{"id":"1"}}}`, `{"op":`, `{"op":0,"s":8}`} {
		if err := r.fake.SendRaw(r.ctx, []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	r.send(dm(alice, dmAlice, "after the noise"))
	if p := r.posts(1); p[0].Content != "echo: after the noise" {
		t.Fatalf("reply = %q", p[0].Content)
	}
	r.fake.Snapshot(func(s *discordtest.State) {
		if s.Dials() != 1 || s.Resumes() != 0 {
			t.Errorf("%d connections and %d resumes; a bad frame must not drop the session", s.Dials(), s.Resumes())
		}
	})
	if !strings.Contains(r.logs.String(), "discord_bad_frame") {
		t.Errorf("the bad frames are not logged:\n%s", r.logs.String())
	}
}

func TestReplyIsRedacted(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Zq9", 30)
	r := newRig(t, func(context.Context, Turn) (string, string, error) {
		return "the tool printed " + key + " and the bot token " + token, "c", nil
	})
	r.send(dm(alice, dmAlice, "show the env"))
	p := r.posts(1)[0].Content
	if strings.Contains(p, key) || strings.Contains(p, token) || !strings.Contains(p, "[REDACTED]") {
		t.Fatalf("reply not redacted: %q", p)
	}
}
