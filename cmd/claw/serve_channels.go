package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channel"
	"github.com/clawsec/claw/internal/channel/discord"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/serve"
)

// serveChannel is a channel claw serve runs, and the runtime (broker,
// agent, memory) it acts through, which a reload replaces.
type serveChannel struct {
	name   string
	ch     channel.Channel
	holder *runtimeHolder
	reopen func(ctx context.Context) (*agentRuntime, error)
}

// openChannels opens the channels whose sections the config has (the
// Discord channel, for [channels.discord]). An invalid section, or one
// that cannot start (no token), stops claw serve before it listens.
func openChannels(ctx context.Context, g *globals, o *serveOptions, e *env, queue *approvals.Queue, log *slog.Logger) ([]serveChannel, error) {
	var out []serveChannel
	if sec, ok := e.cfg.Channels[config.ChannelDiscord]; ok {
		c, err := openDiscord(ctx, g, o, e, sec, queue, log)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// channelRuntime opens the agent runtime of a channel: a broker of its
// own named after it, with its section's autonomy (security.autonomy when
// absent) and tools_allow, and the approver given. The section is read
// from the config each time (a reload takes its changes); a section gone
// from the config leaves the channel read-only and without tools.
func channelRuntime(ctx context.Context, g *globals, o *serveOptions, name string, approver broker.Approver, log *slog.Logger) (*agentRuntime, error) {
	return newAgentRuntime(ctx, g, &o.actionOptions, name, approver, func(ro *runtimeOptions) {
		ro.log = log
		ro.broker = func(c *broker.Config, cfg *config.Config) {
			sec, ok := cfg.Channels[name]
			if !ok {
				c.Autonomy, c.ToolsAllow = config.AutonomyReadonly, []string{}
				return
			}
			if sec.Autonomy != "" {
				c.Autonomy = sec.Autonomy
			}
			c.ToolsAllow = sec.ToolsAllow
		}
	})
}

// chatFunc runs turns of rt's agent for a channel: each conversation name
// the channel gives is a conversation of the agent's memory (started on
// its first turn), and the user goes into the receipts of the turn's tool
// calls.
func chatFunc(h *runtimeHolder) channel.ChatFunc {
	var mu sync.Mutex
	ids := map[string]string{}
	return func(ctx context.Context, user, conv, text string) (string, error) {
		mu.Lock()
		id := ids[conv]
		mu.Unlock()
		ref := h.acquire()
		defer ref.wg.Done()
		res, err := ref.rt.Agent.Turn(broker.WithUser(ctx, user), agent.TurnRequest{Conversation: id, NewConversation: id == "", Message: text})
		if err != nil {
			return "", err
		}
		mu.Lock()
		ids[conv] = res.Conversation
		mu.Unlock()
		return res.Reply, nil
	}
}

func openDiscord(ctx context.Context, g *globals, o *serveOptions, e *env, sec config.Channel, queue *approvals.Queue, log *slog.Logger) (serveChannel, error) {
	name := config.ChannelDiscord
	late := &discord.LateApprover{}
	reopen := func(ctx context.Context) (*agentRuntime, error) { return channelRuntime(ctx, g, o, name, late, log) }
	rt, err := reopen(ctx)
	if err != nil {
		return serveChannel{}, err
	}
	holder := &runtimeHolder{cur: &runtimeRef{rt: rt}}
	estopFile := filepath.Join(e.home, serve.EstopFile)
	var approvers []string
	for _, id := range sec.ApproverIDs {
		approvers = append(approvers, "discord:"+id)
	}
	env := &channel.Env{
		Name: name, Broker: rt.Broker, Tools: rt.Agent.Tools(), Autonomy: rt.Autonomy,
		Queue: queue, Approvers: approvers, Chat: chatFunc(holder), Log: log.With("channel", name),
		Estop: func() bool { st, _ := readEstop(estopFile); return st.Engaged },
	}
	opts := []func(*discord.Config){func(c *discord.Config) {
		c.Estop = func(ctx context.Context, by string) error {
			return estopEngage(ctx, g, &o.keys, e.home, estopFile, by, "engaged from Discord")
		}
	}}
	if api := os.Getenv(discordAPIEnv); api != "" {
		if err := checkDiscordAPI(api); err != nil {
			rt.Close()
			return serveChannel{}, withCode(exitUsage, err)
		}
		opts = append(opts, func(c *discord.Config) { c.API = api })
	}
	bot, err := discord.Open(env, sec, os.Getenv, late, opts...)
	if err != nil {
		rt.Close()
		return serveChannel{}, withCode(exitError, err, "set the bot token in the variable [channels.discord] token_env names, and check the section")
	}
	return serveChannel{name: name, ch: bot, holder: holder, reopen: reopen}, nil
}

// discordAPIEnv points the Discord channel at another REST base, for
// tests against a Discord on this machine.
const discordAPIEnv = "CLAW_DISCORD_API"

// checkDiscordAPI allows https, or http to a loopback address only: the
// bot token goes wherever the API is.
func checkDiscordAPI(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s=%q is not a URL", discordAPIEnv, s)
	}
	if u.Scheme == "https" {
		return nil
	}
	if u.Scheme == "http" && serve.CheckLoopback(u.Host) == nil {
		return nil
	}
	return fmt.Errorf("%s must be https, or http on a loopback address: the bot token is sent there", discordAPIEnv)
}

// runChannels runs the channels until ctx ends. A channel that fails for
// good (Discord's 4004: a wrong token) calls fail with why.
func runChannels(ctx context.Context, chans []serveChannel, fail func(error)) (wait func()) {
	var wg sync.WaitGroup
	for _, c := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.ch.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				fail(fmt.Errorf("channel %s: %w", c.name, err))
			}
		}()
	}
	return wg.Wait
}

// reloadChannels opens each channel's runtime anew (config, policies)
// and swaps it in once all of them opened; turns running on the old ones
// finish there.
func reloadChannels(ctx context.Context, chans []serveChannel) error {
	next := make([]*agentRuntime, 0, len(chans))
	for _, c := range chans {
		rt, err := c.reopen(ctx)
		if err != nil {
			for _, r := range next {
				r.Close()
			}
			return fmt.Errorf("channel %s: %w", c.name, err)
		}
		next = append(next, rt)
	}
	for i, c := range chans {
		c.holder.swap(next[i])
	}
	return nil
}

func closeChannels(chans []serveChannel) {
	for _, c := range chans {
		c.holder.close()
	}
}
