package runtime

import (
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
