package runtime

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clawsec/claw/internal/config"
)

// configWithEverything is a default config whose maps and slices have
// two entries each where it can, so that every leaf is reachable.
func configWithEverything(t *testing.T) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(`
[providers.a]
kind = "mock"
[providers.b]
kind = "mock"
`), "config.toml", "/home/u/.claw")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// leaves calls f with a path and a settable value for every leaf of v
// (strings, numbers, bools, each element of a list, each map value), and
// for every list and map itself.
func leaves(path string, v reflect.Value, f func(string, reflect.Value)) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if sf.IsExported() && sf.Tag.Get("json") != "-" {
				leaves(path+"."+sf.Name, v.Field(i), f)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			leaves(path, v.Elem(), f)
		}
	case reflect.Slice:
		f(path, v)
		for i := range v.Len() {
			leaves(path+"[]", v.Index(i), f)
		}
	case reflect.Map:
		f(path, v)
		for _, k := range v.MapKeys() {
			// a map value is changed in a copy, put back after each change
			cp := reflect.New(v.Type().Elem()).Elem()
			cp.Set(v.MapIndex(k))
			leaves(path+"["+k.String()+"]", cp, func(q string, lv reflect.Value) {
				f(q, lv)
				v.SetMapIndex(k, cp)
			})
		}
	default:
		f(path, v)
	}
}

// Changing any one value the config's JSON carries changes the id; the
// same config gives the same id, whatever the map order.
func TestConfigIDCoversEveryValue(t *testing.T) {
	env := func(c *config.Config) *Env { return &Env{Home: "/home/u/.claw", UserDir: "/home/u", Config: c} }
	base, err := configID(env(configWithEverything(t)))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 { // map order differs between runs of the same config
		if id, _ := configID(env(configWithEverything(t))); id != base {
			t.Fatalf("the same config has two ids: %s and %s", base, id)
		}
	}
	var paths []string
	leaves("config", reflect.ValueOf(configWithEverything(t)), func(p string, _ reflect.Value) { paths = append(paths, p) })
	t.Logf("%d values", len(paths))
	if len(paths) < 100 {
		t.Fatalf("only %d values found in the config", len(paths))
	}
	for n, p := range paths {
		c := configWithEverything(t)
		i := 0
		leaves("config", reflect.ValueOf(c), func(q string, v reflect.Value) {
			if i++; i-1 != n || !v.CanSet() {
				return
			}
			change(v)
		})
		id, err := configID(env(c))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if id == base {
			t.Errorf("changing %s leaves the config id as it was", p)
		}
	}
	c := configWithEverything(t)
	c.Path = "/elsewhere/config.toml" // not part of the effective config
	if id, _ := configID(env(c)); id != base {
		t.Error("the config file's path changed the id")
	}
}

// change makes v differ from what it was.
func change(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		k := reflect.New(v.Type().Key()).Elem()
		if k.Kind() == reflect.String {
			k.SetString("added-by-test")
		}
		v.SetMapIndex(k, reflect.New(v.Type().Elem()).Elem())
	}
}

// sourceHome is a claw home whose config.toml is doc, loaded as claw serve
// loads it, with its configID.
func sourceHome(t *testing.T, doc string) (*Env, string) {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, err := config.LoadOrDefault(filepath.Join(home, "config.toml"), home)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{Home: home, Config: c, UserDir: os.Getenv("HOME")}
	id, err := configID(e)
	if err != nil {
		t.Fatal(err)
	}
	return e, id
}

// The source id a hook computes from the file, without parsing it, is the
// one the daemon vouches for after loading the same file; a changed
// byte, variable, home or user directory is another id.
func TestSourceIDMatchesTheLoadedConfig(t *testing.T) {
	t.Setenv("CLAW_SRC_DIR", "/srv/data")
	doc := "[security]\nread_paths = [\"$CLAW_SRC_DIR\", \"~/x\"]\n"
	e, id := sourceHome(t, doc)
	daemon := loadedSourceID(e, id)
	if daemon == "" {
		t.Fatal("the daemon vouches for no source id of a plain config")
	}
	data, err := config.ReadFile(filepath.Join(e.Home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	hookID := func(home, userDir string, data []byte) string {
		t.Helper()
		id, err := sourceID(home, userDir, data, config.EnvWithHome(home))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	if got := hookID(e.Home, e.UserDir, data); got != daemon {
		t.Fatalf("the hook's source id %s, the daemon's %s", got, daemon)
	}
	for name, other := range map[string]func() string{
		"a byte":         func() string { return hookID(e.Home, e.UserDir, append([]byte(" "), data...)) },
		"no file":        func() string { return hookID(e.Home, e.UserDir, nil) },
		"the home":       func() string { return hookID(e.Home+"x", e.UserDir, data) },
		"the user's dir": func() string { return hookID(e.Home, e.UserDir+"x", data) },
		"a variable": func() string {
			t.Setenv("CLAW_SRC_DIR", "/srv/other")
			return hookID(e.Home, e.UserDir, data)
		},
		"$HOME": func() string {
			t.Setenv("HOME", "/elsewhere")
			return hookID(e.Home, e.UserDir, data)
		},
	} {
		if other() == daemon {
			t.Errorf("another %s, the same source id", name)
		}
		t.Setenv("CLAW_SRC_DIR", "/srv/data")
		t.Setenv("HOME", e.UserDir)
	}
}

// The daemon vouches for no source id when the text does not show every
// variable the config uses (a TOML escape spells the $), nor when the
// file no longer makes the config it loaded.
func TestLoadedSourceIDRefuses(t *testing.T) {
	t.Setenv("CLAW_SRC_DIR", "/srv/data")
	e, id := sourceHome(t, "[security]\nread_paths = [\"\\u0024CLAW_SRC_DIR\"]\n")
	if e.Config.Security.ReadPaths[0] != "/srv/data" {
		t.Fatalf("read_paths %q: the escape was not expanded", e.Config.Security.ReadPaths)
	}
	if src := loadedSourceID(e, id); src != "" {
		t.Errorf("source id %s for a config whose variable the text hides", src)
	}
	e, id = sourceHome(t, "[security]\nautonomy = \"supervised\"\n")
	if loadedSourceID(e, id) == "" {
		t.Fatal("no source id for a plain config")
	}
	if err := os.WriteFile(filepath.Join(e.Home, "config.toml"), []byte("[security]\nautonomy = \"full\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if src := loadedSourceID(e, id); src != "" {
		t.Errorf("source id %s for a file edited since the config was loaded", src)
	}
}
