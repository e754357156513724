package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/clawsec/claw/internal/channel/discord/discordtest"
)

// cmdDiscord drives a fake Discord (REST and gateway on 127.0.0.1) from a
// script; the claw under test reaches it through CLAW_DISCORD_API:
//
//	discord start                       serve the fake, token $DISCORD_BOT_TOKEN
//	discord connected [N]               wait until a bot has identified (N times in all)
//	discord send USER CHANNEL TEXT      a DM from USER in CHANNEL
//	discord wait CHANNEL REGEXP         wait for a message posted in CHANNEL that matches
//	discord code CHANNEL                set $CODE to the code of the last prompt posted in CHANNEL
//	discord posts                       print every posted message (channel, then content)
//	discord answer USER CHANNEL yes|no  from now on, answer the next prompt posted in CHANNEL as USER
//	                                    (in the background, for a prompt a blocking command waits on)
func cmdDiscord(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! discord")
	}
	if len(args) == 0 {
		ts.Fatalf("usage: discord start|connected|send|wait|code|posts ...")
	}
	fake, _ := ts.Value("discord").(*discordFake)
	if fake == nil {
		ts.Fatalf("discord: no fake (Setup must put one in Values)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wait := func(what string, cond func(*discordtest.State) bool) {
		if err := fake.s.Wait(ctx, cond); err != nil {
			ts.Fatalf("discord: waiting for %s: %v", what, err)
		}
	}
	switch args[0] {
	case "start":
		fake.s = discordtest.New(ts.Getenv("DISCORD_BOT_TOKEN"))
		ts.Defer(fake.s.Close)
		ts.Setenv("CLAW_DISCORD_API", fake.s.API())
		return
	case "connected":
		n := 1
		if len(args) > 1 {
			var err error
			n, err = strconv.Atoi(args[1])
			ts.Check(err)
		}
		wait("a connected bot", func(s *discordtest.State) bool { return s.Connected() && s.Identifies() >= n })
	case "send":
		if len(args) != 4 {
			ts.Fatalf("usage: discord send USER CHANNEL TEXT")
		}
		if err := fake.s.Send(ctx, discordtest.MessageCreate{AuthorID: args[1], ChannelID: args[2], Content: args[3]}); err != nil {
			ts.Fatalf("discord send: %v", err)
		}
	case "wait":
		if len(args) != 3 {
			ts.Fatalf("usage: discord wait CHANNEL REGEXP")
		}
		if _, err := fake.s.WaitPost(ctx, 0, args[1], regexp.MustCompile(args[2])); err != nil {
			ts.Fatalf("discord: waiting for a message matching %s: %v", args[2], err)
		}
	case "code":
		var code string
		wait("a prompt", func(s *discordtest.State) bool {
			for _, p := range s.Posted() {
				if c := discordtest.Code(p); p.ChannelID == args[1] && c != "" {
					code = c
				}
			}
			return code != ""
		})
		ts.Setenv("CODE", code)
	case "answer":
		if len(args) != 4 {
			ts.Fatalf("usage: discord answer USER CHANNEL yes|no")
		}
		// a failure shows in the script's next "discord wait"
		actx, acancel := context.WithTimeout(context.Background(), 2*time.Minute)
		ts.Defer(acancel)
		from := fake.s.NumPosted()
		go fake.s.Answer(actx, from, args[1], args[2], args[3])
	case "posts":
		fake.s.Snapshot(func(s *discordtest.State) {
			for _, p := range s.Posted() {
				fmt.Fprintf(ts.Stdout(), "%s %s\n", p.ChannelID, strings.ReplaceAll(p.Content, "\n", `\n`))
			}
		})
	default:
		ts.Fatalf("discord: unknown subcommand %q", args[0])
	}
}

// discordFake holds a script's fake Discord.
type discordFake struct{ s *discordtest.Server }
