// Package config loads claw's configuration: one TOML file, by default
// $CLAW_HOME/config.toml.
//
// # Loading
//
// [Load] reads the file (at most [MaxSize] bytes), parses it, applies the
// default of every absent key ([Default]), expands paths ([Config.Expand])
// and validates the result. A missing file is an error that satisfies
// errors.Is(err, fs.ErrNotExist); [LoadOrDefault] turns it into the
// defaults. [HomeDir] finds the claw home: the --home flag, else
// $CLAW_HOME, else ~/.claw.
//
//	home, err := config.HomeDir(flagHome)
//	c, err := config.Load(filepath.Join(home, "config.toml"), home)
//	var errs *config.Errors
//	if errors.As(err, &errs) {
//		for _, e := range errs.List {
//			fmt.Println(e) // config.toml:5:12: security.autonomy: "godmode" is not one of readonly, supervised, full
//		}
//	}
//
// # Strictness
//
// Parsing is strict and reports every problem in one pass, each with the
// file, line and column ([Error]), sorted by position: a syntax error (the
// first one only, since nothing after it can be trusted), every unknown key
// (with the closest known key as a suggestion), every value of the wrong
// type, enum values that are not allowed (naming the allowed ones), invalid
// durations and sizes, negative or out-of-range numbers, allowed_domains
// entries that are not a host name, "*.host" or "*", allow_private_cidrs
// entries that are not a masked CIDR prefix or an address (or that open
// every address), relative paths, workspace_exec_allow entries that are
// not a clean path inside the workspace (absolute, ~ or $VAR, "..", ".",
// a pattern, empty), passphrase_for entries that are neither a risk level nor a rule id, and
// provider headers named like a credential (Authorization, api-key, any
// name with auth, token, secret, key, password, cookie or session in it):
// a key comes only from the environment variable api_key_env names.
// Positions come from go-toml's unstable parser AST; values are decoded from
// the document tree by the field tags of [Config].
//
// # Expansion
//
// Path-like fields (workspace_dir, security.forbidden_paths,
// security.read_paths, receipts.dir, receipts.key) may start with ~/ and
// may use $VAR or ${VAR}. An unset variable is an error, never an empty
// string, and a path that expands to a relative one is an error. "$$" is a
// literal "$". Load supplies $CLAW_HOME as the claw home when the
// environment does not set it. After expansion every such path is absolute
// and cleaned (forbidden_paths may also be "**/" patterns).
//
// # Secrets
//
// The passphrase hash, any key named like a secret, the value of any
// provider header named like a credential (refused by validation, but
// masked all the same), and any value that looks like a credential are
// replaced by [Mask] in [Config.Masked], and error messages never repeat
// such values. Print a config with
// c.Masked().WriteTOML(w) or by JSON-encoding c.Masked().
package config
