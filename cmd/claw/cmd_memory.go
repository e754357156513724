package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

func newMemoryCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "memory",
		Short: "List, search, show and clear the agent's conversations",
		Long: `Read the agent's memory: the conversations stored in the SQLite file named by
[agent].memory_db (default HOME/memory.sqlite), with full-text search.

Secrets were redacted before anything was stored; what is printed is
redacted again.`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newMemoryListCommand(g), newMemorySearchCommand(g), newMemoryShowCommand(g), newMemoryClearCommand(g))
	return c
}

func newMemoryListCommand(g *globals) *cobra.Command {
	var (
		asJSON bool
		limit  int
	)
	c := &cobra.Command{
		Use:   "list",
		Short: "List conversations, most recent first",
		Long: `List the stored conversations, most recently updated first: id, channel,
number of messages, last update, and the first words of the first message.

EXIT STATUS
  0 ok (also when there are none), 1 error, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			rows, err := runtime.MemoryConversations(c.Context(), g.runtimeEnv, limit)
			if err != nil {
				return err
			}
			if asJSON {
				return writeConfigJSON(g, struct {
					Conversations []runtime.ConversationRow `json:"conversations"`
				}{rows})
			}
			if len(rows) == 0 {
				infof(g.stderr, "no conversations yet")
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCHANNEL\tMESSAGES\tUPDATED\tFIRST MESSAGE")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.ID, oneLine(r.Channel, 40), r.Messages,
					r.UpdatedAt.Local().Format(time.DateTime), oneLine(r.Title, 60))
			}
			return tw.Flush()
		},
	}
	addOutputFlag(c, &asJSON)
	c.Flags().IntVar(&limit, "limit", 50, "list at most this many (0: all)")
	return c
}

func newMemorySearchCommand(g *globals) *cobra.Command {
	var (
		asJSON bool
		limit  int
	)
	c := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search every stored message",
		Long: `Search the stored messages for every word of QUERY (plain words, not a query
language; stemmed, so "deploy" also finds "deploying"), best match first,
with the conversation id and a snippet where matches are in [brackets].

EXIT STATUS
  0 ok (also when nothing matched), 1 error, 2 usage.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if limit < 0 || limit > runtime.MaxMemoryResults {
				return usageErrorf("--limit must be between 1 and %d", runtime.MaxMemoryResults)
			}
			query := strings.Join(args, " ")
			res, err := runtime.MemorySearch(c.Context(), g.runtimeEnv, query, limit)
			if err != nil {
				return err
			}
			if asJSON {
				return writeConfigJSON(g, res)
			}
			if len(res.Hits) == 0 {
				infof(g.stderr, "no matches for %q", oneLine(query, 80))
				return nil
			}
			for _, h := range res.Hits {
				fmt.Fprintf(g.stdout, "%s  %s  %s  %s\n", h.Message.ConversationID, h.Message.CreatedAt.Local().Format(time.DateTime),
					h.Message.Role, oneLine(h.Snippet, 160))
			}
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	c.Flags().IntVar(&limit, "limit", 10, fmt.Sprintf("show at most this many matches (at most %d)", runtime.MaxMemoryResults))
	return c
}

func newMemoryShowCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Print one conversation",
		Long: fmt.Sprintf(`Print every message of the conversation ID (or an unambiguous prefix of at
least %d characters), oldest first, with the tool calls the model made.

EXIT STATUS
  0 ok, 1 no such conversation or another error, 2 usage.`, runtime.MemoryIDPrefix),
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			conv, err := runtime.MemoryConversation(c.Context(), g.runtimeEnv, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeConfigJSON(g, conv)
			}
			w := g.stdout
			fmt.Fprintf(w, "conversation %s  channel %s  %d messages  updated %s\n", conv.ID, oneLine(conv.Channel, 80),
				conv.Conversation.Messages, conv.UpdatedAt.Local().Format(time.DateTime))
			if conv.Summary != "" {
				fmt.Fprintf(w, "summary: %s\n", oneLine(conv.Summary, 400))
			}
			for _, m := range conv.Messages {
				fmt.Fprintf(w, "\n[%s] %s", m.CreatedAt.Local().Format(time.DateTime), m.Role)
				if m.ToolName != "" {
					fmt.Fprintf(w, " (%s)", oneLine(m.ToolName, 80))
				}
				fmt.Fprintln(w)
				if m.Content != "" {
					for _, l := range strings.Split(m.Content, "\n") {
						fmt.Fprintf(w, "  %s\n", sanitize(l))
					}
				}
				for _, tc := range m.ToolCalls {
					fmt.Fprintf(w, "  -> %s %s\n", oneLine(tc.Name, 80), oneLine(string(tc.Arguments), 200))
				}
			}
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	return c
}

func newMemoryClearCommand(g *globals) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "clear --yes",
		Short: "Delete every stored conversation",
		Long: `Delete every conversation and message (and every 'claw sop' run, with its
steps' outputs), rebuild the search index and vacuum the file, so the
deleted text is gone from disk. There is no undo, so it
needs --yes. Receipts are not touched: they are evidence, not memory.

EXIT STATUS
  0 cleared, 1 error, 2 usage (including a missing --yes).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if !yes {
				return withCode(exitUsage, errors.New("claw memory clear deletes every conversation and needs --yes"),
					"run 'claw memory clear --yes'")
			}
			// the runs first: tables made by another connection after the
			// memory's opened would hide "messages" from its index rebuild
			runs, err := clearSOPRuns(c.Context(), g)
			if err != nil {
				return err
			}
			n, path, err := runtime.ClearMemory(c.Context(), g.runtimeEnv)
			if errors.Is(err, runtime.ErrNoMemory) {
				infof(g.stderr, "no memory file; nothing to clear")
				return nil
			}
			if err != nil {
				return err
			}
			infof(g.stderr, "cleared %s and %s from %s", runtime.Plural(n, "conversation"), runtime.Plural(runs, "SOP run"), path)
			return nil
		},
	}
	c.Flags().BoolVar(&yes, "yes", false, "really delete everything")
	return c
}
