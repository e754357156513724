package runtime

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channel"
	"github.com/clawsec/claw/internal/channel/discord"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/serve"
)

// openDiscord makes the Discord channel: it asks approvals on Discord
// (codes) and through the daemon's queue; its approvers may engage the
// stop with estop.
func openDiscord(env *channel.Env, sec config.Channel, approver broker.Approver, estop func(context.Context, string) error) (channel.Channel, func() string, error) {
	late, _ := approver.(*discord.LateApprover)
	var opts []func(*discord.Config)
	if api := os.Getenv(discordAPIEnv); api != "" {
		if err := checkDiscordAPI(api); err != nil {
			return nil, nil, WithCode(ExitUsage, err)
		}
		opts = append(opts, func(c *discord.Config) { c.API = api })
	}
	if estop != nil {
		opts = append(opts, func(c *discord.Config) { c.Estop = estop })
	}
	bot, err := discord.Open(env, sec, os.Getenv, late, opts...)
	if err != nil {
		return nil, nil, WithCode(ExitError, err, "export the bot token in the variable [channels.discord] token_env names")
	}
	return bot, func() string { return "the Discord gateway" }, nil
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
