package runtime

import (
	"io"
	"log/slog"
	"os"
	"runtime"

	"github.com/clawsec/claw/internal/logx"
)

// startLogger returns the logger of a long-running command (the agent, the
// daemon), chosen by $CLAW_LOG and writing to standard error, and logs the
// startup, config_loaded and workspace events. e may be nil when no config
// was loaded.
//
// Logs are for operators; they never carry a key (every string is
// redacted) nor a prompt at info level. Receipts are the evidence.
func startLogger(w io.Writer, e *Env, version string) *slog.Logger {
	log := logx.FromEnv(w)
	if e != nil && e.Config != nil {
		// Also the values of the configured key variables, whatever
		// their names.
		log = logx.New(w, os.Getenv(logx.EnvVar), KeyRedactor(e))
	}
	log.Info("claw starting", logx.Event(logx.EventStartup),
		slog.String("version", version),
		slog.String("go", runtime.Version()),
		slog.Int("pid", os.Getpid()),
		slog.Bool("root", os.Geteuid() == 0))
	if e == nil || e.Config == nil {
		return log
	}
	c := e.Config
	path := c.Path
	if path == "" {
		path = "(defaults)"
	}
	log.Info("config loaded", logx.Event(logx.EventConfigLoaded),
		slog.String("path", path),
		slog.String("home", e.Home),
		slog.String("autonomy", c.Security.Autonomy),
		slog.String("default_provider", c.DefaultProvider),
		slog.Int("providers", len(c.Providers)),
		slog.Bool("passphrase_gate", c.Security.PassphraseHash != ""),
		slog.Int("min_landlock_abi", c.Sandbox.MinLandlockABI),
		slog.String("receipts", c.Receipts.Dir))
	log.Info("workspace", logx.Event(logx.EventWorkspace),
		slog.String("dir", c.WorkspaceDir),
		slog.Bool("workspace_only", c.Security.WorkspaceOnly))
	return log
}
