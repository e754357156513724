package mcpgate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// payload is an upstream result rebuilt from its content alone. It is what
// [Proxy.Forward] hands back to the broker (and what the outcome receipt's
// output digest covers).
type payload struct {
	Proxied bool   `json:"mcp_proxied"`
	IsError bool   `json:"is_error,omitempty"`
	Content []item `json:"content"`
}

// item is one content block: text, image or audio. Nothing else survives.
type item struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     []byte `json:"data,omitempty"`
	MIMEType string `json:"mime_type,omitempty"`
}

func (p payload) text() string {
	var parts []string
	for _, it := range p.Content {
		if it.Type == "text" {
			parts = append(parts, it.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// rebuild copies res's content into a payload of at most about limit
// bytes: _meta, annotations, structuredContent and unknown block types
// are dropped; text past the limit is cut, and blobs that do not fit are
// replaced by a note.
func rebuild(res *mcp.CallToolResult, limit int) payload {
	p := payload{Proxied: true, IsError: res.IsError, Content: []item{}}
	left := limit
	addText := func(s string) {
		if left <= 0 {
			return
		}
		if len(s) > left {
			s = bound(s, left)
		}
		left -= len(s)
		p.Content = append(p.Content, item{Type: "text", Text: s})
	}
	addBlob := func(kind string, data []byte, mime string) {
		if n := len(data) * 4 / 3; n > left {
			addText(fmt.Sprintf("[%s of %d bytes omitted: the result is limited to %d bytes]", kind, len(data), limit))
			return
		}
		left -= len(data) * 4 / 3
		p.Content = append(p.Content, item{Type: kind, Data: data, MIMEType: mime})
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			addText(c.Text)
		case *mcp.ImageContent:
			addBlob("image", c.Data, c.MIMEType)
		case *mcp.AudioContent:
			addBlob("audio", c.Data, c.MIMEType)
		case *mcp.ResourceLink:
			addText(fmt.Sprintf("[resource link %s %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				addText(c.Resource.Text)
			} else if c.Resource != nil {
				addText(fmt.Sprintf("[binary resource %s omitted]", c.Resource.URI))
			}
		default:
			addText(fmt.Sprintf("[content of type %T omitted]", c))
		}
	}
	return p
}

// proxiedPayload decodes a payload made by rebuild.
func proxiedPayload(raw json.RawMessage) (payload, bool) {
	var p payload
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || !p.Proxied {
		return payload{}, false
	}
	return p, true
}

// result is the tool result given to the client.
func (p payload) result(limit int) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: p.IsError, Content: []mcp.Content{}}
	left := limit
	for _, it := range p.Content {
		switch it.Type {
		case "text":
			s := it.Text
			if len(s) > left {
				s = bound(s, max(left, 0))
			}
			left -= len(s)
			res.Content = append(res.Content, &mcp.TextContent{Text: s})
		case "image":
			res.Content = append(res.Content, &mcp.ImageContent{Data: it.Data, MIMEType: it.MIMEType})
		case "audio":
			res.Content = append(res.Content, &mcp.AudioContent{Data: it.Data, MIMEType: it.MIMEType})
		}
	}
	return res
}
