package discord

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channel"
	"github.com/clawsec/claw/internal/config"
)

// LateApprover is the Discord channel's broker.Approver, for claw serve
// to build the channel's broker with before the Bot exists (the Bot needs
// the Env, the Env's broker needs its approver). Until [Open] sets the
// Bot, and whenever the Bot is not running, it answers "timeout": what
// needs approval does not run.
type LateApprover struct{ bot atomic.Pointer[Bot] }

// Approve asks on Discord through the Bot, if there is one.
func (l *LateApprover) Approve(ctx context.Context, r broker.Request) (broker.Answer, error) {
	b, err := l.running()
	if err != nil {
		return broker.Answer{Result: approvals.StatusTimeout, By: "none"}, err
	}
	return b.Approve(ctx, r)
}

func (l *LateApprover) running() (*Bot, error) {
	if b := l.bot.Load(); b != nil {
		return b, nil
	}
	return nil, errors.New("the discord channel is not running")
}

// AskIn asks r in the Discord channel channelID for another channel's
// user (requester, like "bridge:s1", names them in the queue); only the
// Discord approvers decide it. Without a running Bot it answers
// "timeout".
func (l *LateApprover) AskIn(ctx context.Context, channelID, requester string, r broker.Request) (broker.Answer, error) {
	b, err := l.running()
	if err != nil {
		return broker.Answer{Result: approvals.StatusTimeout, By: "none"}, err
	}
	return b.ask(ctx, channelID, requester, r)
}

// Open makes the Discord channel of claw serve from the Env built for
// [channels.discord] and that section: the bot token is read from the
// environment variable token_env names (never from the file), and the
// allowlists and approvers come from the section. late, when the Env's
// broker was built with it, starts asking approvals on Discord. The Bot
// is a channel.Channel. opts adjust the rest of its Config (tests point
// API at a fake Discord).
func Open(env *channel.Env, sec config.Channel, getenv func(string) string, late *LateApprover, opts ...func(*Config)) (*Bot, error) {
	if sec.TokenEnv == "" {
		return nil, errors.New("discord: [channels.discord] token_env is not set")
	}
	tok := getenv(sec.TokenEnv)
	if tok == "" {
		return nil, fmt.Errorf("discord: the environment variable %s ([channels.discord] token_env) is empty", sec.TokenEnv)
	}
	if env.Chat == nil {
		return nil, errors.New("discord: the channel has no agent to talk to")
	}
	cfg := Config{
		Token: tok, AllowedUsers: sec.AllowedUserIDs, AllowedChannels: sec.AllowedChannelIDs, Approvers: sec.ApproverIDs,
		Logger: env.Log, Queue: env.Queue, Stopped: env.Estop,
		Turn: func(ctx context.Context, t Turn) (string, string, error) {
			conv := t.Conversation
			if conv == "" {
				conv = "discord:" + t.ChannelID + ":" + t.UserID
			}
			reply, err := env.Chat(ctx, t.UserID, conv, t.Message)
			return reply, conv, err
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if late != nil {
		late.bot.Store(b)
	}
	return b, nil
}

var _ channel.Channel = (*Bot)(nil)
