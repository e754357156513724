package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/redact"
)

// DefaultAPI is Discord's REST API base.
const DefaultAPI = "https://discord.com/api/v10"

// Limits of the bot.
const (
	maxTurns       = 4  // turns that run at once
	maxWaiting     = 64 // messages accepted before "busy" is answered
	typingInterval = 8 * time.Second
	sendTimeout    = 2 * time.Minute
)

// Turn is one message for the agent.
type Turn struct {
	// Conversation is the id the previous turn of this user in this
	// channel returned; empty starts a conversation.
	Conversation string
	UserID       string
	ChannelID    string
	Message      string
}

// TurnFunc runs a turn through the agent (and so every tool call through
// the broker) and returns the reply and the conversation's id. ctx
// carries the turn's origin (see [WithOrigin]) for the approvals it
// needs.
type TurnFunc func(ctx context.Context, t Turn) (reply, conversation string, err error)

// Config wires a Bot.
type Config struct {
	// Token is the bot token. It is sent to Discord and nowhere else.
	Token string
	// AllowedUsers may talk to the bot (in DMs, and where they mention it
	// in AllowedChannels); empty means nobody.
	AllowedUsers []string
	// AllowedChannels are the guild channels the bot answers in.
	AllowedChannels []string
	// Approvers may answer approval prompts; empty means nobody can
	// approve from Discord.
	Approvers []string

	// API is the REST base (DefaultAPI when empty); the gateway's URL is
	// asked from it.
	API        string
	HTTPClient *http.Client
	Clock      Clock
	Logger     *slog.Logger

	Turn  TurnFunc // required
	Queue Queue    // required: approvals are asked through it
	// Estop, when set, lets an approver engage the emergency stop by
	// sending "estop"; by is "discord:ID".
	Estop func(ctx context.Context, by string) error
	// Stopped, when set, reports whether the emergency stop is engaged;
	// while it is, a message is answered with that instead of a turn.
	Stopped func() bool
}

// Bot is the Discord channel.
type Bot struct {
	cfg       Config
	rest      *rest
	log       *slog.Logger
	codes     *codebook
	users     map[string]bool
	channels  map[string]bool
	approvers map[string]bool

	mu     sync.Mutex
	selfID string
	convs  map[string]string      // channel:user → conversation id
	locks  map[string]*sync.Mutex // channel:user → its turns, one at a time
	wait   int                    // messages accepted and not yet answered

	sem chan struct{}
	wg  sync.WaitGroup
}

// New checks cfg and returns a Bot.
func New(cfg Config) (*Bot, error) {
	if cfg.Token == "" {
		return nil, errors.New("discord: no bot token")
	}
	if cfg.Turn == nil || cfg.Queue == nil {
		return nil, errors.New("discord: Turn and Queue are required")
	}
	for _, l := range [][]string{cfg.AllowedUsers, cfg.AllowedChannels, cfg.Approvers} {
		for _, id := range l {
			if !snowflake(id) {
				return nil, fmt.Errorf("discord: %q is not a Discord id", clipID(id))
			}
		}
	}
	if cfg.API == "" {
		cfg.API = DefaultAPI
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	set := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, id := range l {
			m[id] = true
		}
		return m
	}
	return &Bot{
		cfg: cfg, log: cfg.Logger, codes: newCodebook(),
		rest:  newREST(cfg.API, cfg.Token, cfg.HTTPClient, cfg.Clock, cfg.Logger),
		users: set(cfg.AllowedUsers), channels: set(cfg.AllowedChannels), approvers: set(cfg.Approvers),
		convs: map[string]string{}, locks: map[string]*sync.Mutex{},
		sem: make(chan struct{}, maxTurns),
	}, nil
}

// Run connects to the gateway and serves until ctx ends (nil), or the
// gateway refuses the bot for good (a *CloseError: a wrong token, or
// intents the bot may not have). Turns still running are waited for.
func (b *Bot) Run(ctx context.Context) error {
	g := &gateway{
		token: b.cfg.Token, hc: b.cfg.HTTPClient, clock: b.cfg.Clock, log: b.log,
		discover: b.rest.gatewayURL,
		onReady: func(id string) {
			b.mu.Lock()
			b.selfID = id
			b.mu.Unlock()
		},
		onMessage: func(m Message) { b.handle(ctx, m) },
	}
	err := g.run(ctx)
	b.wg.Wait()
	return err
}

// handle routes one message: an approval answer, the estop, or a turn.
// It never blocks the gateway's read loop.
func (b *Bot) handle(ctx context.Context, m Message) {
	b.mu.Lock()
	self := b.selfID
	b.mu.Unlock()
	if m.Author.Bot || m.WebhookID != "" || m.Author.ID == self || self == "" {
		return
	}
	dm := m.GuildID == ""
	mentioned := false
	for _, u := range m.Mentions {
		mentioned = mentioned || u.ID == self
	}
	text := strings.TrimSpace(stripMention(m.Content, self))
	if a, ok := parseAnswer(text); ok && (dm || b.channels[m.ChannelID]) {
		b.spawn(func() { b.answer(ctx, m, a) })
		return
	}
	if !(dm || b.channels[m.ChannelID] && mentioned) {
		return // not addressed to the bot
	}
	if b.cfg.Estop != nil && b.approvers[m.Author.ID] && strings.EqualFold(text, "estop") {
		b.spawn(func() { b.estop(ctx, m) })
		return
	}
	if !b.users[m.Author.ID] {
		b.log.Warn("discord message from a user who is not allowed ignored", "event", "discord_ignored",
			"user_id", m.Author.ID, "channel_id", m.ChannelID)
		return
	}
	if text == "" {
		return
	}
	if b.cfg.Stopped != nil && b.cfg.Stopped() {
		b.spawn(func() {
			b.reply(ctx, m.ChannelID, "The emergency stop is engaged: claw does nothing until a person clears it on the machine.")
		})
		return
	}
	b.mu.Lock()
	busy := b.wait >= maxWaiting
	if !busy {
		b.wait++
	}
	b.mu.Unlock()
	if busy {
		b.spawn(func() { b.reply(ctx, m.ChannelID, "claw is busy with too many messages; try again in a minute.") })
		return
	}
	b.spawn(func() {
		defer func() { b.mu.Lock(); b.wait--; b.mu.Unlock() }()
		b.turn(ctx, m, text)
	})
}

func (b *Bot) spawn(f func()) {
	b.wg.Add(1)
	go func() { defer b.wg.Done(); f() }()
}

// stripMention removes the bot's mentions (<@id> and <@!id>).
func stripMention(s, self string) string {
	if self == "" {
		return s
	}
	s = strings.ReplaceAll(s, "<@"+self+">", "")
	return strings.ReplaceAll(s, "<@!"+self+">", "")
}

// turn runs one turn, one at a time per user and channel, showing the
// typing indicator until the reply is sent.
func (b *Bot) turn(ctx context.Context, m Message, text string) {
	key := m.ChannelID + ":" + m.Author.ID
	b.mu.Lock()
	l, ok := b.locks[key]
	if !ok {
		l = &sync.Mutex{}
		b.locks[key] = l
	}
	b.mu.Unlock()
	l.Lock()
	defer l.Unlock()
	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-b.sem }()

	stopTyping := b.typing(ctx, m.ChannelID)
	b.mu.Lock()
	conv := b.convs[key]
	b.mu.Unlock()
	reply, conv, err := b.cfg.Turn(WithOrigin(ctx, m.ChannelID, m.Author.ID), Turn{Conversation: conv, UserID: m.Author.ID, ChannelID: m.ChannelID, Message: text})
	stopTyping()
	if err != nil {
		b.log.Warn("discord turn failed", "event", "discord_turn_failed", "user_id", m.Author.ID, "channel_id", m.ChannelID, "error", err.Error())
		reply = "claw could not answer that: the turn failed (the daemon's log says why)."
	} else {
		b.mu.Lock()
		b.convs[key] = conv
		b.mu.Unlock()
	}
	b.reply(ctx, m.ChannelID, reply)
}

// typing shows the typing indicator now, and keeps it on (it lasts ten
// seconds) until the returned stop is called.
func (b *Bot) typing(ctx context.Context, channelID string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	beat := func() {
		if err := b.rest.typing(ctx, channelID); err != nil && ctx.Err() == nil {
			b.log.Debug("discord typing failed", "event", "discord_typing_failed", "error", err.Error())
		}
	}
	beat()
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(typingInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// reply sends text in as many messages as it takes. It leaves the
// machine: credentials in it (a key a tool printed, the bot's own token)
// are redacted first.
func (b *Bot) reply(ctx context.Context, channelID, text string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
	defer cancel()
	for _, c := range split(redact.Values(text, b.cfg.Token), MaxChunk) {
		if err := b.rest.sendMessage(ctx, channelID, c); err != nil {
			b.log.Warn("discord reply failed", "event", "discord_send_failed", "channel_id", channelID, "error", err.Error())
			return
		}
	}
}

// Approve implements broker.Approver for the turns of this channel: it
// asks in the channel the turn's message came from.
func (b *Bot) Approve(ctx context.Context, r broker.Request) (broker.Answer, error) {
	o, ok := originFrom(ctx)
	if !ok {
		return broker.Answer{Result: approvals.StatusTimeout, By: "none"}, errors.New("discord: no channel to ask in")
	}
	return b.ask(ctx, o.channelID, "discord:"+o.userID, r)
}

// Ask puts r in the approvals queue, posts it with a code in channelID,
// and waits until an approver answers (on Discord, or through the queue
// from elsewhere), the request expires, or ctx ends.
func (b *Bot) Ask(ctx context.Context, channelID string, r broker.Request) (broker.Answer, error) {
	return b.ask(ctx, channelID, "discord", r)
}

// ask is Ask, with the queue's requester naming the user the action is
// for ("discord:ID").
func (b *Bot) ask(ctx context.Context, channelID, requester string, r broker.Request) (broker.Answer, error) {
	none := broker.Answer{Result: approvals.StatusTimeout, By: "none"}
	p := approvals.Pending{RequestBody: approvals.RequestBody{
		Tool: string(r.Tool), Summary: r.Summary, Args: r.Args, Risk: r.Decision.Risk,
		ActionSHA256: r.ActionSHA256, Requester: requester,
	}}
	// only this channel's approvers decide it, here or through the queue
	for _, id := range b.cfg.Approvers {
		p.Approvers = append(p.Approvers, "discord:"+id)
	}
	if len(p.Approvers) == 0 {
		return none, fmt.Errorf("%w: [channels.discord] approver_ids is empty", approvals.ErrNotAllowed)
	}
	for _, rs := range r.Decision.Reasons {
		p.Reasons = append(p.Reasons, approvals.Reason{ID: rs.ID, Msg: rs.Msg})
	}
	id, expires, err := b.cfg.Queue.Submit(p)
	if err != nil {
		return none, err
	}
	code, err := b.codes.issue(prompt{queueID: id, digest: r.ActionSHA256, channelID: channelID, summary: r.Summary}, b.cfg.Clock.Now())
	if err != nil {
		b.cfg.Queue.Withdraw(id)
		return none, err
	}
	defer b.codes.retire(code, b.cfg.Clock.Now())
	b.log.Info("discord approval asked", "event", "discord_approval_asked", "approval_id", id, "channel_id", channelID, "tool", r.Tool)
	b.reply(ctx, channelID, renderPrompt(r, code, expires))
	ans, err := b.cfg.Queue.Wait(ctx, id)
	if err != nil {
		b.cfg.Queue.Withdraw(id)
		return none, err
	}
	return ans, nil
}

// answer decides a prompt by its code, for an approver; anyone else is
// ignored and logged.
func (b *Bot) answer(ctx context.Context, m Message, a answer) {
	user := m.Author.ID
	if !b.approvers[user] {
		b.log.Warn("discord approval answer from a user who is not an approver ignored", "event", "discord_answer_ignored",
			"user_id", user, "channel_id", m.ChannelID)
		return
	}
	p, state := b.codes.lookup(a.code)
	switch {
	case state == codeUnknown:
		if b.codes.wrongCode(user, b.cfg.Clock.Now()) {
			b.log.Warn("discord approval answers over the limit ignored", "event", "discord_answer_ignored", "user_id", user)
			return
		}
		b.reply(ctx, m.ChannelID, "No action is waiting for code "+a.code+".")
		return
	case state == codeSpent:
		b.reply(ctx, m.ChannelID, "Code "+a.code+" is no longer pending: it was answered or expired.")
		return
	case m.GuildID != "" && m.ChannelID != p.channelID:
		b.log.Warn("discord approval answer outside the prompt's channel ignored", "event", "discord_answer_ignored", "user_id", user, "channel_id", m.ChannelID)
		return
	}
	decision, done := "reject", "Rejected"
	if a.approve {
		decision, done = "approve", "Approved"
	}
	err := b.cfg.Queue.Decide(p.queueID, decision, "discord:"+user, p.digest)
	switch {
	case err == nil:
		b.codes.retire(a.code, b.cfg.Clock.Now())
		b.log.Info("discord approval answered", "event", "discord_answer", "approval_id", p.queueID, "user_id", user, "decision", decision)
		b.reply(ctx, m.ChannelID, done+" ("+a.code+").")
	case errors.Is(err, approvals.ErrExpired):
		b.codes.retire(a.code, b.cfg.Clock.Now())
		b.reply(ctx, m.ChannelID, "Code "+a.code+" expired; the action did not run.")
	case errors.Is(err, approvals.ErrAlreadyDecided), errors.Is(err, approvals.ErrUnknown):
		b.codes.retire(a.code, b.cfg.Clock.Now())
		b.reply(ctx, m.ChannelID, "Code "+a.code+" is no longer pending: it was answered or expired.")
	case errors.Is(err, approvals.ErrStopped):
		b.reply(ctx, m.ChannelID, "The emergency stop is engaged: nothing can be approved until it is cleared.")
	default:
		b.log.Warn("discord approval answer failed", "event", "discord_answer_failed", "approval_id", p.queueID, "error", err.Error())
		b.reply(ctx, m.ChannelID, "That answer could not be recorded; the action did not run.")
	}
}

// estop engages the emergency stop for an approver.
func (b *Bot) estop(ctx context.Context, m Message) {
	if err := b.cfg.Estop(ctx, "discord:"+m.Author.ID); err != nil {
		b.log.Warn("discord estop failed", "event", "discord_estop_failed", "user_id", m.Author.ID, "error", err.Error())
		b.reply(ctx, m.ChannelID, "The emergency stop could not be engaged; use 'claw estop' on the machine.")
		return
	}
	b.reply(ctx, m.ChannelID, "Emergency stop engaged. Clear it on the machine with 'claw estop --clear'.")
}
