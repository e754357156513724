package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/clawsec/claw/internal/runtime"
)

// The flag conventions of every command:
//
//   - the output format is -o/--output text|json (addOutputFlag); the
//     older --json switch of the same meaning still works, unlisted;
//   - JSON given as input has a flag named for what it is (gate test
//     --action, tool run --args); the older --json spelling is accepted
//     with a notice on stderr (addOldSpelling);
//   - completions complete the values of the flags below (addCompletions).

// outputFormat is the value of -o/--output: text or json.
type outputFormat struct{ json *bool }

func (o outputFormat) String() string {
	if o.json != nil && *o.json {
		return "json"
	}
	return "text"
}

func (o outputFormat) Set(s string) error {
	switch s {
	case "text":
		*o.json = false
	case "json":
		*o.json = true
	default:
		return fmt.Errorf("output format %q: want text or json", s)
	}
	return nil
}

func (o outputFormat) Type() string { return "format" }

// addOutputFlag registers -o/--output for a command whose output is data,
// and the older --json switch, unlisted.
func addOutputFlag(c *cobra.Command, asJSON *bool) {
	c.Flags().VarP(outputFormat{asJSON}, "output", "o", "output format: text or json")
	c.Flags().BoolVar(asJSON, "json", false, "same as -o json")
	_ = c.Flags().MarkHidden("json")
}

// oldSpellingAnnotation marks a flag kept under an older name; its value
// is the current name.
const oldSpellingAnnotation = "claw_old_spelling_of"

// addOldSpelling registers the older name old for the string flag p
// (registered as current), unlisted; using it prints a notice.
func addOldSpelling(c *cobra.Command, p *string, old, current string) {
	c.Flags().StringVar(p, old, "", "old spelling of --"+current)
	_ = c.Flags().MarkHidden(old)
	_ = c.Flags().SetAnnotation(old, oldSpellingAnnotation, []string{current})
}

// noticeOldSpellings prints, for each flag of c given under an older name,
// which name to use.
func noticeOldSpellings(c *cobra.Command, g *globals) {
	c.Flags().Visit(func(f *pflag.Flag) {
		if cur := f.Annotations[oldSpellingAnnotation]; len(cur) == 1 {
			fmt.Fprintf(g.stderr, "claw: --%s is now --%s; the old spelling still works for now\n", f.Name, cur[0])
		}
	})
}

// flagValues are the values completed for flags of these names, on every
// command that has one, and for the first argument of a command whose
// argValuesAnnotation names one of them.
func flagValues(g *globals) map[string]func() []string {
	return map[string]func() []string{
		"autonomy": func() []string { return []string{"readonly", "supervised", "full"} },
		"output":   func() []string { return []string{"text", "json"} },
		"format":   func() []string { return []string{"jsonl", "csv"} },
		"kind":     func() []string { return []string{"ed25519", "ecdsa-p256"} },
		"tool":     runtime.ToolNames,
		"provider": func() []string { return providerNames(g) },
	}
}

// argValuesAnnotation names the flagValues entry that completes a
// command's first argument.
const argValuesAnnotation = "claw_arg_values"

// addCompletions registers the completion of flag values on c and its
// subcommands, and of their first argument where it is annotated.
func addCompletions(c *cobra.Command, values map[string]func() []string) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if list, ok := values[f.Name]; ok {
			_ = c.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return list(), cobra.ShellCompDirectiveNoFileComp
			})
		}
	})
	if list, ok := values[c.Annotations[argValuesAnnotation]]; ok && c.ValidArgsFunction == nil {
		c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveDefault
			}
			return list(), cobra.ShellCompDirectiveNoFileComp
		}
	}
	for _, sub := range c.Commands() {
		addCompletions(sub, values)
	}
}

// providerNames are the providers of the config in force; an unreadable
// config completes nothing.
func providerNames(g *globals) []string {
	quiet := *g
	quiet.stderr = io.Discard
	cfg, err := loadUserConfig(&quiet)
	if err != nil {
		return nil
	}
	var names []string
	for _, s := range providerSpecs(cfg) {
		names = append(names, s.Name)
	}
	return names
}
