package runtime

import (
	"bufio"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/clawsec/claw/internal/atomicfile"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/term"
)

var (
	tableHeader    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[`) })
	securityHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\s*security\s*\]\s*(#.*)?$`) })
	hashLine       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*passphrase_hash\s*=`) })
)

// SetHashLine returns the config text with passphrase_hash in [security]
// set to hash: the existing line replaced, or a line inserted right after
// the [security] header, or a [security] table appended.
func SetHashLine(text []byte, hash string) []byte {
	line := `passphrase_hash = "` + hash + `"`
	lines := strings.SplitAfter(string(text), "\n")
	sec := -1
	for i, l := range lines {
		body := strings.TrimRight(l, "\r\n")
		switch {
		case securityHeader().MatchString(body):
			sec = i
		case sec >= 0 && tableHeader().MatchString(body):
			// the next table: no passphrase_hash line in [security]
			return []byte(strings.Join(insertAt(lines, sec+1, line+"\n"), ""))
		case sec >= 0 && hashLine().MatchString(body):
			lines[i] = line + l[len(body):]
			return []byte(strings.Join(lines, ""))
		}
	}
	if sec >= 0 {
		return []byte(strings.Join(insertAt(lines, sec+1, line+"\n"), ""))
	}
	out := string(text)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return []byte(out + "\n[security]\n" + line + "\n")
}

func insertAt(lines []string, i int, s string) []string {
	if i > 0 && !strings.HasSuffix(lines[i-1], "\n") {
		lines[i-1] += "\n"
	}
	return append(lines[:i], append([]string{s}, lines[i:]...)...)
}

// WritePassphraseHash sets the hash in the config file at path: it writes
// a temporary file next to it with the same mode, checks that it is a
// valid config whose hash is the new one, and renames it over the old
// file. On any problem the old file is left as it was; a result that
// would be wrong is an *EditError.
func WritePassphraseHash(path, home, hash string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	old, err := ReadSmall(path, 1<<20)
	if err != nil {
		return err
	}
	text := SetHashLine(old, hash)
	err = atomicfile.WriteFileCheck(path, text, fi.Mode().Perm(), func(tmp string) error {
		cfg, _, err := config.LoadOrDefault(tmp, home)
		if err != nil {
			return &EditError{Err: fmt.Errorf("the config would not be valid with the new hash, so it was not changed: %w", err)}
		}
		if cfg.Security.PassphraseHash != hash {
			return &EditError{Misplaced: true, Err: errors.New("could not place passphrase_hash in the [security] table, so the config was not changed")}
		}
		return nil
	})
	var bad *atomicfile.CheckError
	switch {
	case errors.As(err, &bad):
		return bad.Err
	case err != nil:
		return fmt.Errorf("writing the config: %w", err)
	}
	return nil
}

// SetPassphrase sets the passphrase that read returns as the argon2id
// hash in the config file at path of the claw home: a missing file is
// an error before read is called, and a config that cannot take the hash
// is left as it was, with a hint.
func SetPassphrase(home, path string, read func() (string, error)) error {
	if _, err := os.Stat(path); err != nil {
		return WithCode(ExitError, fmt.Errorf("no config file at %s", path), "create one with 'claw init'")
	}
	pass, err := read()
	if err != nil {
		return err
	}
	hash, err := broker.HashPassphrase(pass, broker.DefaultArgon2id)
	if err != nil {
		return WithCode(ExitError, err)
	}
	err = WritePassphraseHash(path, home, hash)
	var ee *EditError
	switch {
	case errors.As(err, &ee) && ee.Misplaced:
		return WithCode(ExitError, err, `put passphrase_hash = "" right under the [security] header, and run this again`)
	case ee != nil:
		return WithCode(ExitError, err, "see 'claw config validate'")
	}
	return err
}

// PassphraseLine reads a new passphrase as one line of in (claw
// passphrase set --stdin), bounded to term.MaxPassphraseInput bytes and at
// least broker.MinPassphraseLen long.
func PassphraseLine(in io.Reader) (string, error) {
	r := bufio.NewReader(io.LimitReader(in, term.MaxPassphraseInput+2))
	line, err := r.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", WithCode(ExitError, fmt.Errorf("reading standard input: %w", err))
	}
	if !strings.HasSuffix(line, "\n") && len(line) > term.MaxPassphraseInput {
		return "", WithCode(ExitError, fmt.Errorf("the passphrase is longer than %d bytes", term.MaxPassphraseInput))
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if len(line) < broker.MinPassphraseLen {
		return "", errShortPassphrase()
	}
	return line, nil
}

// NewPassphrase asks for a new passphrase twice with ask (the terminal,
// without echo): it must be long enough and the same both times.
func NewPassphrase(ask func(prompt string) (string, error)) (string, error) {
	p1, err := ask("New passphrase: ")
	if err != nil {
		return "", WithCode(ExitError, err)
	}
	if len(p1) < broker.MinPassphraseLen {
		return "", errShortPassphrase()
	}
	p2, err := ask("Repeat passphrase: ")
	if err != nil {
		return "", WithCode(ExitError, err)
	}
	if subtle.ConstantTimeCompare([]byte(p1), []byte(p2)) != 1 {
		return "", WithCode(ExitError, errors.New("the passphrases do not match"), "nothing was changed")
	}
	return p1, nil
}

func errShortPassphrase() error {
	return WithCode(ExitError, fmt.Errorf("the passphrase must be at least %d characters", broker.MinPassphraseLen))
}
