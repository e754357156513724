package runtime

import (
	"reflect"
	"slices"
	"testing"

	"github.com/clawsec/claw/internal/config"
)

// TestPolicyMapsEverySecurityKey: with every [security] key set to a value
// of its own, each field of the gate's policy data carries the value of
// the key of the same name (PassphraseEnabled: whether a passphrase hash
// is set), so a field added to gate.Policy and not mapped here, or mapped
// from the wrong key, fails.
func TestPolicyMapsEverySecurityKey(t *testing.T) {
	c := config.Default(t.TempDir())
	sec := reflect.ValueOf(&c.Security).Elem()
	for i := range sec.NumField() {
		f, name := sec.Field(i), sec.Type().Field(i).Name
		switch f.Kind() {
		case reflect.String:
			f.SetString("value-of-" + name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.ValueOf([]string{"value-of-" + name}))
			}
		}
	}
	pol := reflect.ValueOf(Policy(c))
	for i := range pol.NumField() {
		f, name := pol.Field(i), pol.Type().Field(i).Name
		if name == "PassphraseEnabled" {
			if !f.Bool() {
				t.Errorf("PassphraseEnabled is false with a passphrase hash set")
			}
			continue
		}
		src := sec.FieldByName(name)
		if !src.IsValid() {
			t.Errorf("gate.Policy.%s has no [security] key of that name to come from: map it in Policy and here", name)
			continue
		}
		if !reflect.DeepEqual(f.Interface(), src.Interface()) {
			t.Errorf("gate.Policy.%s = %v, want %v (the [security] key)", name, f.Interface(), src.Interface())
		}
	}
}

// TestPolicyListsAreNeverNull: unset lists are empty lists in the policy
// data, which the policies iterate without checking for null.
func TestPolicyListsAreNeverNull(t *testing.T) {
	var c config.Config
	pol := reflect.ValueOf(Policy(&c))
	for i := range pol.NumField() {
		if f := pol.Field(i); f.Kind() == reflect.Slice && f.IsNil() {
			t.Errorf("gate.Policy.%s is nil", pol.Type().Field(i).Name)
		}
	}
	if !slices.Equal(Policy(&c).ForbiddenPaths, []string{}) {
		t.Errorf("ForbiddenPaths = %v, want []", Policy(&c).ForbiddenPaths)
	}
}
