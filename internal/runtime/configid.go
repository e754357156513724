package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/clawsec/claw/internal/config"
)

// configID names a claw home and its effective config (after defaults and
// expansion), so that a hook asks only a daemon that decides with the same,
// in the same mount namespace: paths are resolved where the decision is
// made, and a daemon under systemd's PrivateTmp or ProtectHome sees other
// files. The config enters as a digest of every value JSON would carry
// (valueDigest), without building encoding/json's encoders for the config
// types, which cost each hook call about 0.17 ms.
func configID(e *Env) (string, error) {
	mnt, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", e.Home, e.UserDir, mnt)
	if err := valueDigest(h, reflect.ValueOf(e.Config)); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// valueDigest writes v to h in an encoding that tells any two different
// values apart: each value is a kind tag and its content, strings and
// lists with their lengths, struct fields by name, map entries in the
// order of their encoded keys. A struct field counts when it is exported
// and JSON would carry it (a `json:"-"` field is left out, as from the
// config's JSON).
func valueDigest(h hash.Hash, v reflect.Value) error {
	var buf [binary.MaxVarintLen64]byte
	tag := func(b byte) { h.Write([]byte{b}) }
	uvarint := func(n uint64) { h.Write(buf[:binary.PutUvarint(buf[:], n)]) }
	switch v.Kind() {
	case reflect.String:
		tag('s')
		uvarint(uint64(v.Len()))
		h.Write([]byte(v.String()))
	case reflect.Bool:
		tag('b')
		b := uint64(0)
		if v.Bool() {
			b = 1
		}
		uvarint(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		tag('i')
		h.Write(buf[:binary.PutVarint(buf[:], v.Int())])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		tag('u')
		uvarint(v.Uint())
	case reflect.Float32, reflect.Float64:
		tag('f')
		uvarint(math.Float64bits(v.Float()))
	case reflect.Slice, reflect.Array:
		tag('l')
		uvarint(uint64(v.Len()))
		for i := range v.Len() {
			if err := valueDigest(h, v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		return mapDigest(h, v)
	case reflect.Struct:
		return structDigest(h, v)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			tag('n')
			return nil
		}
		tag('p')
		if v.Kind() == reflect.Interface {
			h.Write([]byte(v.Elem().Type().String()))
			tag(0)
		}
		return valueDigest(h, v.Elem())
	default:
		return fmt.Errorf("config digest: cannot digest a %s", v.Kind())
	}
	return nil
}

func structDigest(h hash.Hash, v reflect.Value) error {
	h.Write([]byte{'{'})
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue
		}
		if err := valueDigest(h, reflect.ValueOf(f.Name)); err != nil {
			return err
		}
		if err := valueDigest(h, v.Field(i)); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	h.Write([]byte{'}'})
	return nil
}

// mapDigest writes the entries of a map in the order of their keys'
// encodings, so that the digest does not depend on Go's map order.
func mapDigest(h hash.Hash, v reflect.Value) error {
	type entry struct{ k, v []byte }
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		var kb, vb bytesHash
		if err := valueDigest(&kb, it.Key()); err != nil {
			return err
		}
		if err := valueDigest(&vb, it.Value()); err != nil {
			return err
		}
		entries = append(entries, entry{kb.Bytes(), vb.Bytes()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
	var buf [binary.MaxVarintLen64]byte
	h.Write([]byte{'m'})
	h.Write(buf[:binary.PutUvarint(buf[:], uint64(len(entries)))])
	for _, e := range entries {
		h.Write(e.k)
		h.Write(e.v)
	}
	return nil
}

// bytesHash collects what valueDigest writes, for sorting map entries.
type bytesHash struct{ bytes.Buffer }

func (*bytesHash) Sum(b []byte) []byte { return b }
func (*bytesHash) Size() int           { return 0 }
func (*bytesHash) BlockSize() int      { return 1 }

// sourceID names a config by what it is made from instead of by its
// value: the claw home, the user's home directory and the mount namespace
// (as configID), the config file's bytes (nil: no file) and the value
// getenv gives every variable config.EnvNames finds in them. A hook
// computes it without parsing the config. It vouches for the config only
// through a daemon that checked, when it loaded, that these inputs make
// the config it decides with (loadedSourceID): config.FromSource reads
// nothing else, so the same inputs make the same config, and the same
// configID.
func sourceID(home, userDir string, data []byte, getenv func(string) string) (string, error) {
	mnt, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	var buf [binary.MaxVarintLen64]byte
	field := func(b []byte) {
		h.Write(buf[:binary.PutUvarint(buf[:], uint64(len(b)))])
		h.Write(b)
	}
	field([]byte("claw config source v1"))
	field([]byte(home))
	field([]byte(userDir))
	field([]byte(mnt))
	if data == nil {
		field([]byte("no file"))
	} else {
		field([]byte("file"))
		field(data)
	}
	for _, n := range config.EnvNames(data) {
		field([]byte(n))
		field([]byte(getenv(n)))
	}
	return "source:sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// loadedSourceID is the sourceID of e's config, whose configID is id, or
// "" when the daemon cannot vouch for one: it reads the config file
// again and makes a config of it, recording the variables asked for; the
// sourceID holds only when that config has the same configID (the file
// did not change meanwhile) and every variable asked for is one that
// sourceID covers (config.EnvNames may miss an escaped reference).
func loadedSourceID(e *Env, id string) string {
	path := e.Config.Path
	if path == "" {
		path = filepath.Join(e.Home, "config.toml")
	}
	data, err := config.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		return ""
	}
	env := config.EnvWithHome(e.Home)
	asked := map[string]bool{}
	c, err := config.FromSource(data, path, e.Home, func(k string) string {
		asked[k] = true
		return env(k)
	})
	if err != nil {
		return ""
	}
	if again, err := configID(&Env{Home: e.Home, UserDir: e.UserDir, Config: c}); err != nil || again != id {
		return ""
	}
	names := config.EnvNames(data)
	for k := range asked {
		if _, ok := slices.BinarySearch(names, k); !ok {
			return ""
		}
	}
	src, err := sourceID(e.Home, e.UserDir, data, env)
	if err != nil {
		return ""
	}
	return src
}
