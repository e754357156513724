package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxActionBytes bounds an action document.
const MaxActionBytes = 1 << 20

// ParseAction decodes an action document {"tool":…,"args":{…}} strictly:
// unknown fields, trailing data, a missing tool or a document larger than
// MaxActionBytes are errors. Numbers become float64, as OPA sees them.
func ParseAction(b []byte) (Action, error) {
	var a Action
	if len(b) > MaxActionBytes {
		return a, fmt.Errorf("action JSON larger than %d bytes", MaxActionBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		return Action{}, fmt.Errorf("malformed action JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Action{}, errors.New("malformed action JSON: trailing data after the object")
	}
	if a.Tool == "" {
		return Action{}, errors.New(`malformed action JSON: missing "tool"`)
	}
	if a.Args == nil {
		a.Args = map[string]any{}
	}
	a.Args = numbersToFloat(a.Args).(map[string]any)
	return a, nil
}

func numbersToFloat(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = numbersToFloat(x)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = numbersToFloat(x)
		}
		return t
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return t.String()
		}
		return f
	}
	return v
}
