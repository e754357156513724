// Command fakediscord serves the fake Discord of package discordtest on
// 127.0.0.1, for trying claw's Discord channel without Discord
// (scripts/channels-demo.sh). It accepts the bot token in
// $DISCORD_BOT_TOKEN, prints its REST base (for CLAW_DISCORD_API) on the
// first line, then reads one command a line on standard input and
// answers each with one line, "ok ...", or "error: ..." when it failed
// or took over a minute:
//
//	connected N                   a bot has identified N times in all
//	send USER CHANNEL TEXT        a DM from USER in CHANNEL; TEXT is the rest of the line
//	wait CHANNEL REGEXP           a post in CHANNEL matching REGEXP, since the last send; its first line
//	answer USER CHANNEL yes|no    answer, as USER, the next approval prompt posted in CHANNEL (in the background)
//
// It stops at the end of its input.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/channel/discord/discordtest"
)

func main() {
	s := discordtest.New(os.Getenv("DISCORD_BOT_TOKEN"))
	defer s.Close()
	fmt.Println(s.API())
	in := bufio.NewScanner(os.Stdin)
	mark := 0 // the posts "wait" looks at start here
	for in.Scan() {
		reply, err := run(s, in.Text(), &mark)
		if err != nil {
			reply = "error: " + err.Error()
		}
		fmt.Println(strings.ReplaceAll(reply, "\n", " "))
	}
}

// run runs one command line.
func run(s *discordtest.Server, line string, mark *int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := strings.SplitN(line, " ", 4)
	switch {
	case f[0] == "connected" && len(f) == 2:
		n, err := strconv.Atoi(f[1])
		if err != nil {
			return "", err
		}
		err = s.Wait(ctx, func(st *discordtest.State) bool { return st.Connected() && st.Identifies() >= n })
		return "ok", err
	case f[0] == "send" && len(f) == 4:
		*mark = s.NumPosted()
		return "ok", s.Send(ctx, discordtest.MessageCreate{AuthorID: f[1], ChannelID: f[2], Content: f[3]})
	case f[0] == "wait" && len(f) >= 3:
		re, err := regexp.Compile(strings.Join(f[2:], " "))
		if err != nil {
			return "", err
		}
		p, err := s.WaitPost(ctx, *mark, f[1], re)
		first, _, _ := strings.Cut(p.Content, "\n")
		return "ok " + first, err
	case f[0] == "answer" && len(f) == 4:
		from := s.NumPosted()
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s.Answer(ctx, from, f[1], f[2], f[3])
		}()
		return "ok", nil
	}
	return "", errors.New("unknown command (connected, send, wait, answer)")
}
