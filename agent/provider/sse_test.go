package provider

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readAllEvents(in string, lineCap, eventCap int) ([]sseEvent, error) {
	r := newSSEReader(strings.NewReader(in))
	if lineCap > 0 {
		r.lineCap = lineCap
	}
	if eventCap > 0 {
		r.eventCap = eventCap
	}
	var out []sseEvent
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
	}{
		{name: "one event", in: "data: {\"a\":1}\n\n", want: []sseEvent{{Data: `{"a":1}`}}},
		{name: "event type", in: "event: ping\ndata: {}\n\n", want: []sseEvent{{Type: "ping", Data: "{}"}}},
		{name: "multi-line data", in: "data: a\ndata: b\n\n", want: []sseEvent{{Data: "a\nb"}}},
		{name: "comments skipped", in: ": OPENROUTER PROCESSING\n\n:x\ndata: 1\n\n", want: []sseEvent{{Data: "1"}}},
		{name: "crlf", in: "event: e\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", want: []sseEvent{{Type: "e", Data: "1"}, {Data: "2"}}},
		{name: "no space after colon", in: "data:1\n\n", want: []sseEvent{{Data: "1"}}},
		{name: "only first space stripped", in: "data:  1\n\n", want: []sseEvent{{Data: " 1"}}},
		{name: "no final blank line", in: "data: [DONE]", want: []sseEvent{{Data: "[DONE]"}}},
		{name: "event without data is not dispatched", in: "event: x\n\ndata: 1\n\n", want: []sseEvent{{Data: "1"}}},
		{name: "id and retry ignored", in: "id: 7\nretry: 10\ndata: 1\n\n", want: []sseEvent{{Data: "1"}}},
		{name: "field without colon", in: "data\n\n", want: []sseEvent{{Data: ""}}},
		{name: "empty input", in: "", want: nil},
		{name: "blank lines only", in: "\n\n\r\n", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAllEvents(tt.in, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSEReaderCaps(t *testing.T) {
	tests := []struct {
		name              string
		in                string
		lineCap, eventCap int
	}{
		{name: "long line", in: "data: " + strings.Repeat("x", 100) + "\n\n", lineCap: 64},
		{name: "long comment", in: ":" + strings.Repeat("x", 100) + "\n\n", lineCap: 64},
		{name: "long event", in: strings.Repeat("data: "+strings.Repeat("x", 40)+"\n", 10) + "\n", lineCap: 64, eventCap: 200},
		{name: "unterminated line", in: strings.Repeat("x", 100000), lineCap: 64 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAllEvents(tt.in, tt.lineCap, tt.eventCap)
			if !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrBadResponse) {
				t.Fatalf("err = %v, want ErrTooLarge and ErrBadResponse", err)
			}
		})
	}
}
