package logx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const planted = "sk-test-PLANTED-0123456789abcdef"

type wrapped struct {
	Name  string            `json:"name"`
	Inner map[string]string `json:"inner"`
}

type stringer struct{}

func (stringer) String() string { return "token " + planted }

type valuer struct{}

func (valuer) LogValue() slog.Value { return slog.StringValue("via valuer " + planted) }

// TestRedactsEverywhere plants a key in every place an attribute can carry
// text and checks that it never reaches the output, in both formats.
func TestRedactsEverywhere(t *testing.T) {
	for _, mode := range []string{"json", "text", "json:debug"} {
		t.Run(mode, func(t *testing.T) {
			var buf bytes.Buffer
			log := New(&buf, mode, nil)
			log = log.With(slog.String("with", "w "+planted))
			log.Info("message with "+planted,
				Event(EventToolRequested),
				slog.String("string", planted),
				slog.Any("error", fmt.Errorf("provider failed: %w", errors.New("bad key "+planted))),
				slog.Group("outer", slog.Group("inner", slog.String("deep", planted), slog.Any("err", errors.New(planted)))),
				slog.Any("struct", wrapped{Name: planted, Inner: map[string]string{"k": planted}}),
				slog.Any("bytes", []byte(planted)),
				slog.Any("stringer", stringer{}),
				slog.Any("valuer", valuer{}),
				slog.Any("raw", json.RawMessage(`{"key":"`+planted+`"}`)),
				slog.String(planted, "key as attribute name"),
			)
			log.WithGroup("grp").Error("failed", slog.String("x", planted))
			out := buf.String()
			if strings.Contains(out, planted) || strings.Contains(out, "PLANTED") {
				t.Fatalf("planted key in the log:\n%s", out)
			}
			if !strings.Contains(out, "[REDACTED]") {
				t.Fatalf("no redaction marker:\n%s", out)
			}
			if !strings.Contains(out, EventToolRequested) {
				t.Fatalf("event missing:\n%s", out)
			}
		})
	}
}

func TestJSONShape(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, "json", nil)
	log.Info("receipt written", Event(EventReceiptWritten), slog.Int("seq", 42),
		slog.Any("struct", wrapped{Name: "n"}))
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, buf.String())
	}
	if rec["event"] != EventReceiptWritten || rec["msg"] != "receipt written" || rec["seq"] != float64(42) {
		t.Errorf("record = %v", rec)
	}
	if s, ok := rec["struct"].(map[string]any); !ok || s["name"] != "n" {
		t.Errorf("struct attribute not kept as JSON: %v", rec["struct"])
	}
}

func TestModes(t *testing.T) {
	tests := []struct {
		name      string
		mode      string
		wantInfo  bool
		wantWarn  bool
		wantDebug bool
		wantJSON  bool
		wantNote  string // a warning about the mode itself
	}{
		{name: "unset is quiet", mode: "", wantWarn: true},
		{name: "text", mode: "text", wantInfo: true, wantWarn: true},
		{name: "json", mode: "json", wantInfo: true, wantWarn: true, wantJSON: true},
		{name: "json debug", mode: "JSON:debug", wantInfo: true, wantWarn: true, wantDebug: true, wantJSON: true},
		{name: "text error", mode: "text:error"},
		{name: "off", mode: "off"},
		{name: "unknown mode", mode: "yaml", wantWarn: true, wantNote: `unknown mode \"yaml\"`},
		{name: "unknown level", mode: "json:loud", wantWarn: true, wantNote: `unknown level \"loud\"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := New(&buf, tt.mode, nil)
			log.Debug("d-line")
			log.Info("i-line")
			log.Warn("w-line")
			out := buf.String()
			for _, c := range []struct {
				word string
				want bool
			}{{"d-line", tt.wantDebug}, {"i-line", tt.wantInfo}, {"w-line", tt.wantWarn}} {
				if strings.Contains(out, c.word) != c.want {
					t.Errorf("%s present = %v, want %v\n%s", c.word, !c.want, c.want, out)
				}
			}
			if tt.wantJSON && !strings.HasPrefix(out, "{") {
				t.Errorf("not JSON:\n%s", out)
			}
			if tt.wantNote != "" && !strings.Contains(out, tt.wantNote) {
				t.Errorf("no note %q:\n%s", tt.wantNote, out)
			}
		})
	}
}

func TestDefaultIsTerse(t *testing.T) {
	var buf bytes.Buffer
	New(&buf, "", nil).Warn("fell back", slog.String("provider", "local"))
	if got := buf.String(); got != "level=WARN msg=\"fell back\" provider=local\n" {
		t.Errorf("default output = %q", got)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvVar, "json")
	t.Setenv("CLAW_TEST_API_KEY", "an-unformatted-secret")
	var buf bytes.Buffer
	FromEnv(&buf).Info("x", slog.String("v", "an-unformatted-secret"))
	if strings.Contains(buf.String(), "an-unformatted-secret") || !strings.Contains(buf.String(), `"v":"[REDACTED]"`) {
		t.Errorf("environment secret not redacted: %s", buf.String())
	}
}

func TestEventsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Events {
		if seen[e] || e == "" || strings.ToLower(e) != e {
			t.Errorf("bad or duplicate event name %q", e)
		}
		seen[e] = true
	}
	if len(Events) != 15 {
		t.Errorf("%d events, want 15", len(Events))
	}
}

// FuzzMode: any CLAW_LOG value gives a working logger that redacts.
func FuzzMode(f *testing.F) {
	for _, s := range []string{"", "json", "text:debug", "off", "json:", ":", "x:y:z", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, mode string) {
		var buf bytes.Buffer
		New(&buf, mode, nil).Error("e", slog.String("k", planted))
		if strings.Contains(buf.String(), planted) {
			t.Fatalf("mode %q leaked: %s", mode, buf.String())
		}
	})
}
