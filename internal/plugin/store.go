package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clawsec/claw/internal/atomicfile"
	"github.com/clawsec/claw/receipts"
)

// Bounds of an installed plugin.
const (
	maxFiles      = 1024
	maxTotalBytes = 64 << 20
	maxPinBytes   = 1 << 20
)

// Statuses of an installed plugin or a resolved call.
const (
	StatusOK           = "ok"
	StatusChanged      = "changed"       // a file differs from its pin
	StatusNotInstalled = "not_installed" // no such plugin
	StatusUnknownTool  = "unknown_tool"  // the plugin has no such tool
	StatusInvalidArgs  = "invalid_args"  // the arguments do not match the tool's schema
)

// Store is the plugins directory ($CLAW_HOME/plugins): one directory per
// plugin and its pin NAME.pin.json beside it.
type Store struct{ Dir string }

// Pin is what install recorded of a plugin.
type Pin struct {
	Name    string            `json:"name"`
	Version string            `json:"version"`
	Files   map[string]string `json:"files"` // slash path → "sha256:<hex>" ("+x" appended when executable)
}

// Installed is one plugin as list and verify see it.
type Installed struct {
	Name     string    `json:"name"`
	Version  string    `json:"version"`
	Status   string    `json:"status"`
	Changed  []string  `json:"changed,omitempty"` // files that differ, are missing or were added
	Manifest *Manifest `json:"manifest,omitempty"`
	digest   string
}

func (s Store) dir(name string) string { return filepath.Join(s.Dir, name) }
func (s Store) pin(name string) string { return filepath.Join(s.Dir, name+".pin.json") }

// Install copies the plugin directory src into the store, replacing an
// installed plugin of the same name, and pins every file. Only regular
// files and directories are copied; anything else is an error.
func (s Store) Install(src string) (*Manifest, error) {
	data, err := readBounded(filepath.Join(src, ManifestFile), MaxManifestBytes)
	if err != nil {
		return nil, err
	}
	m, err := DecodeManifest(data)
	if err != nil {
		return nil, err
	}
	for _, t := range m.Tools {
		p, _ := commandPath(t.Command)
		fi, err := os.Lstat(filepath.Join(src, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return nil, fmt.Errorf("tool %s: command %s is not an executable regular file in %s", t.Name, t.Command, src)
		}
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create the plugins directory: %w", err)
	}
	tmp, err := os.MkdirTemp(s.Dir, ".install-*")
	if err != nil {
		return nil, fmt.Errorf("failed to install: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(src, tmp); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	files, err := hashTree(tmp)
	if err != nil {
		return nil, err
	}
	pin, err := json.MarshalIndent(Pin{Name: m.Name, Version: m.Version, Files: files}, "", "  ")
	if err != nil {
		return nil, err
	}
	old := tmp + ".old"
	if err := os.Rename(s.dir(m.Name), old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("failed to replace the installed plugin: %w", err)
	}
	defer os.RemoveAll(old)
	if err := os.Rename(tmp, s.dir(m.Name)); err != nil {
		return nil, fmt.Errorf("failed to install: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.Dir, m.Name+".pin.json"), pin, 0o600); err != nil {
		return nil, err
	}
	return m, nil
}

// Remove deletes an installed plugin and its pin.
func (s Store) Remove(name string) error {
	if !nameRe().MatchString(name) {
		return fmt.Errorf("%q is not a plugin name", name)
	}
	_, errDir := os.Stat(s.dir(name))
	_, errPin := os.Stat(s.pin(name))
	if errors.Is(errDir, os.ErrNotExist) && errors.Is(errPin, os.ErrNotExist) {
		return fmt.Errorf("plugin %s is not installed", name)
	}
	if err := os.Remove(s.pin(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.RemoveAll(s.dir(name))
}

// List verifies every installed plugin, sorted by name.
func (s Store) List() ([]Installed, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Installed
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".pin.json")
		if !ok || !nameRe().MatchString(name) {
			continue
		}
		out = append(out, s.Verify(name))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Verify compares an installed plugin with its pin. A plugin that cannot
// be read, or whose manifest no longer decodes, is "changed".
func (s Store) Verify(name string) Installed {
	in := Installed{Name: name, Status: StatusNotInstalled}
	if !nameRe().MatchString(name) {
		return in
	}
	data, err := readBounded(s.pin(name), maxPinBytes)
	if errors.Is(err, os.ErrNotExist) {
		return in
	}
	in.Status = StatusChanged
	var pin Pin
	if err != nil || json.Unmarshal(data, &pin) != nil || pin.Name != name {
		in.Changed = []string{name + ".pin.json"}
		return in
	}
	in.Version = pin.Version
	files, err := hashTree(s.dir(name))
	if err != nil {
		in.Changed = []string{err.Error()}
		return in
	}
	for p, h := range pin.Files {
		if files[p] != h {
			in.Changed = append(in.Changed, p)
		}
	}
	for p := range files {
		if _, ok := pin.Files[p]; !ok {
			in.Changed = append(in.Changed, p)
		}
	}
	sort.Strings(in.Changed)
	if len(in.Changed) > 0 {
		return in
	}
	mdata, err := readBounded(filepath.Join(s.dir(name), ManifestFile), MaxManifestBytes)
	if err == nil {
		in.Manifest, err = DecodeManifest(mdata)
	}
	if err != nil {
		in.Changed = []string{ManifestFile}
		return in
	}
	in.Status = StatusOK
	in.digest = receipts.Digest(data)
	return in
}

// Call is a plugin tool resolved for one call.
type Call struct {
	Status string // StatusOK or why it cannot run
	Detail string
	Dir    string   // the installed plugin directory
	Argv   []string // the absolute command
	Tool   Tool
	Reach  Reach
	// Digest is the SHA-256 of the pins the files matched: a second
	// Resolve with the same Digest found the same files.
	Digest string
}

// Resolve verifies the plugin against its pin, finds the tool and checks
// args against its schema. Only a Call with Status StatusOK may run.
func (s Store) Resolve(name, tool string, args map[string]any) Call {
	in := s.Verify(name)
	c := Call{Status: in.Status}
	switch in.Status {
	case StatusNotInstalled:
		c.Detail = fmt.Sprintf("plugin %q is not installed (see claw plugin list)", name)
		return c
	case StatusChanged:
		c.Detail = fmt.Sprintf("plugin %s changed since it was installed (%s); install it again to enable it", name, strings.Join(in.Changed, ", "))
		return c
	}
	for _, t := range in.Manifest.Tools {
		if t.Name == tool {
			p, _ := commandPath(t.Command)
			c.Dir = s.dir(name)
			c.Argv = []string{filepath.Join(c.Dir, filepath.FromSlash(p))}
			c.Tool, c.Reach, c.Digest = t, in.Manifest.Reach, in.digest
			if err := t.ValidateArgs(args); err != nil {
				c.Status, c.Detail = StatusInvalidArgs, fmt.Sprintf("arguments of %s/%s: %v", name, tool, err)
			}
			return c
		}
	}
	c.Status, c.Detail = StatusUnknownTool, fmt.Sprintf("plugin %s has no tool %q", name, tool)
	return c
}

// copyTree copies regular files and directories of src into dst, bounded.
func copyTree(src, dst string) error {
	var n int
	var total int64
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		target := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			return os.Mkdir(target, 0o755)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s: only regular files and directories can be installed", rel)
		}
		if n++; n > maxFiles {
			return fmt.Errorf("more than %d files", maxFiles)
		}
		if total += fi.Size(); total > maxTotalBytes {
			return fmt.Errorf("larger than %d bytes", maxTotalBytes)
		}
		mode := os.FileMode(0o644)
		if fi.Mode().Perm()&0o100 != 0 {
			mode = 0o755
		}
		return copyFile(p, target, mode)
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, maxTotalBytes)); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// hashTree hashes every file under dir; anything but a regular file or a
// directory is an error.
func hashTree(dir string) (map[string]string, error) {
	files := map[string]string{}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return nil
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", filepath.ToSlash(rel))
		}
		if len(files) >= maxFiles {
			return fmt.Errorf("more than %d files", maxFiles)
		}
		if total += fi.Size(); total > maxTotalBytes {
			return fmt.Errorf("larger than %d bytes", maxTotalBytes)
		}
		h, err := hashFile(p)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o111 != 0 {
			h += "+x"
		}
		files[filepath.ToSlash(rel)] = h
		return nil
	})
	return files, err
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxTotalBytes+1)); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func readBounded(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, limit)
	}
	return data, nil
}
