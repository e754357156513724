package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/clawsec/claw/internal/config"
)

// ConfigPaths resolves the claw home and the config file from --home
// (homeFlag), --config (configFlag) and $CLAW_HOME.
func ConfigPaths(homeFlag, configFlag string) (home, path string, err error) {
	home, err = config.HomeDir(homeFlag)
	if err != nil {
		return "", "", WithCode(ExitError, err)
	}
	path = configFlag
	if path == "" {
		path = filepath.Join(home, "config.toml")
	}
	return home, path, nil
}

// InvalidConfig is the error (exit status 1) of the config file at path
// with the problems errs, once show was given each of them as a line;
// hints say what to do.
func InvalidConfig(path string, errs *config.Errors, show func(line string), hints ...string) error {
	for _, e := range errs.List {
		show(e.Error())
	}
	return WithCode(ExitError, fmt.Errorf("%s is invalid: %s", path, Plural(len(errs.List), "problem")), hints...)
}

// LoadConfig is the effective config for commands that act on it: the
// config file at path, or the defaults when there is none (missing). The
// problems of an invalid file go to show, one per line, and end in an
// error with exit status 1.
func LoadConfig(home, path string, show func(line string)) (cfg *config.Config, missing bool, err error) {
	cfg, missing, err = config.LoadOrDefault(path, home)
	var errs *config.Errors
	switch {
	case errors.As(err, &errs):
		return nil, false, InvalidConfig(path, errs, show, "see 'claw config validate'")
	case err != nil:
		return nil, false, WithCode(ExitError, err)
	}
	return cfg, missing, nil
}

// CheckConfigFile loads the config file at path strictly: the config
// when it is valid, its problems when it is not, and an error (exit
// status 1) when it cannot be read.
func CheckConfigFile(home, path string) (*config.Config, *config.Errors, error) {
	cfg, err := config.Load(path, home)
	var errs *config.Errors
	switch {
	case err == nil:
		return cfg, nil, nil
	case errors.As(err, &errs):
		return nil, errs, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, WithCode(ExitError, fmt.Errorf("no config file at %s", path), "create one with 'claw init'")
	default:
		return nil, nil, WithCode(ExitError, err)
	}
}
