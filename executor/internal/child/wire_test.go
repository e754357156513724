package child

import (
	"reflect"
	"testing"
)

// TestWireCarriesEveryField sets each field of Config the parent fills in
// turn and checks that the child decodes the same value: a field added
// to Config but not to the wire form would otherwise reach the child as
// its zero value, silently (a confinement setting dropped).
func TestWireCarriesEveryField(t *testing.T) {
	typ := reflect.TypeOf(Config{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Tag.Get("json") == "-" {
			continue // set by the child, never sent
		}
		var c Config
		v := reflect.ValueOf(&c).Elem().Field(i)
		if !setNonZero(v) {
			t.Fatalf("field %s: no test value for a %s; extend setNonZero", f.Name, f.Type)
		}
		back, err := unmarshalConfig(MarshalConfig(&c))
		if err != nil {
			t.Fatalf("field %s: %v", f.Name, err)
		}
		if got := reflect.ValueOf(back).Elem().Field(i).Interface(); !reflect.DeepEqual(got, v.Interface()) {
			t.Errorf("field %s: sent %#v, the child read %#v", f.Name, v.Interface(), got)
		}
	}
}

// setNonZero gives v a value other than its zero one that a valid config
// may hold, and reports whether it knew how.
func setNonZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint8, reflect.Uint16, reflect.Uint64:
		v.SetUint(7)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		if !setNonZero(s.Index(0)) {
			return false
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if !setNonZero(v.Field(i)) {
				return false
			}
		}
	default:
		return false
	}
	return true
}
