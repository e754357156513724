package discordtest

import (
	"context"
	"regexp"
)

// promptRe finds the code in an approval prompt the bot posted.
var promptRe = regexp.MustCompile("Reply `yes ([a-km-z]{5})`")

// Code is the code of an approval prompt, or "" when p is not one.
func Code(p Posted) string {
	if m := promptRe.FindStringSubmatch(p.Content); m != nil {
		return m[1]
	}
	return ""
}

// NumPosted is how many messages the bot has posted so far.
func (s *Server) NumPosted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.posted)
}

// WaitPost waits for a message the bot posts in channelID that matches
// re, among its posts from the from-th on, and returns the first.
func (s *Server) WaitPost(ctx context.Context, from int, channelID string, re *regexp.Regexp) (Posted, error) {
	var found Posted
	err := s.Wait(ctx, func(st *State) bool {
		for _, p := range st.s.posted[min(from, len(st.s.posted)):] {
			if p.ChannelID == channelID && re.MatchString(p.Content) {
				found = p
				return true
			}
		}
		return false
	})
	return found, err
}

// Answer waits for an approval prompt in channelID among the bot's posts
// from the from-th on, and answers it as userID with word ("yes" or
// "no") in a DM.
func (s *Server) Answer(ctx context.Context, from int, userID, channelID, word string) error {
	p, err := s.WaitPost(ctx, from, channelID, promptRe)
	if err != nil {
		return err
	}
	return s.Send(ctx, MessageCreate{AuthorID: userID, ChannelID: channelID, Content: word + " " + Code(p)})
}
