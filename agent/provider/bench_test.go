package provider

import (
	"bytes"
	"testing"
)

func BenchmarkMockChat(b *testing.B) {
	m := NewMock("", nil)
	req := userReq("run the demo")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Chat(bg(), req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewMockDefaultScript(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		NewMock("", nil)
	}
}

func BenchmarkOpenAIStream(b *testing.B) {
	var data []byte
	chunk := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}` + "\n\n"
	data = append(data, bytes.Repeat([]byte(chunk), 1000)...)
	data = append(data, "data: [DONE]\n\n"...)
	p := &OpenAI{httpBase{name: "bench", max: DefaultMaxResponseBytes}}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.readStream(bytes.NewReader(data), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAnthropic(b *testing.B) {
	data := wire(b, "anthropic_response.json")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeAnthropic("bench", data); err != nil {
			b.Fatal(err)
		}
	}
}
