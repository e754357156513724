package discord

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/clawsec/claw/internal/textesc"
)

// Gateway opcodes (Discord gateway v10) claw speaks.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
)

// Intents claw asks for: guild messages, direct messages and their
// content (a DM-or-mention bot gets the content of those without the
// privileged intent; it is asked for so the mention can be seen).
const (
	intentGuildMessages  = 1 << 9
	intentDirectMessages = 1 << 12
	intentMessageContent = 1 << 15
	// Intents is what claw identifies with.
	Intents = intentGuildMessages | intentDirectMessages | intentMessageContent
)

// maxFrame bounds one gateway frame. READY of a bot in many guilds is
// the largest frame a DM-or-mention bot receives.
const maxFrame = 8 << 20

// frame is one gateway payload.
type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  string          `json:"t"`
}

// errFrame is wrapped by every decoding error of a gateway frame.
var errFrame = errors.New("malformed gateway frame")

// decodeFrame decodes one gateway frame strictly enough that nothing
// after it can be confused: one JSON object, within maxFrame, a
// non-negative opcode and sequence, and an event name only on dispatches.
func decodeFrame(b []byte) (frame, error) {
	var f frame
	if len(b) > maxFrame {
		return f, fmt.Errorf("%w: %d bytes, more than %d", errFrame, len(b), maxFrame)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&f); err != nil {
		return frame{}, fmt.Errorf("%w: %v", errFrame, err)
	}
	if dec.More() {
		return frame{}, fmt.Errorf("%w: data after the frame", errFrame)
	}
	switch {
	case f.Op < 0 || f.Op > 255:
		return frame{}, fmt.Errorf("%w: opcode %d", errFrame, f.Op)
	case f.S != nil && *f.S < 0:
		return frame{}, fmt.Errorf("%w: negative sequence", errFrame)
	case f.Op != opDispatch && f.T != "":
		return frame{}, fmt.Errorf("%w: event name on opcode %d", errFrame, f.Op)
	case f.Op == opDispatch && (f.T == "" || len(f.T) > 64):
		return frame{}, fmt.Errorf("%w: dispatch without a valid event name", errFrame)
	}
	return f, nil
}

// hello is op 10's data.
type hello struct {
	HeartbeatInterval int64 `json:"heartbeat_interval"`
}

// ready is the READY event's data, the parts claw uses.
type ready struct {
	SessionID        string `json:"session_id"`
	ResumeGatewayURL string `json:"resume_gateway_url"`
	User             user   `json:"user"`
}

type user struct {
	ID  string `json:"id"`
	Bot bool   `json:"bot"`
}

// Message is a MESSAGE_CREATE, the parts claw uses.
type Message struct {
	ID        string `json:"id"`
	ChannelID string `json:"channel_id"`
	GuildID   string `json:"guild_id"`
	Author    user   `json:"author"`
	WebhookID string `json:"webhook_id"`
	Content   string `json:"content"`
	Mentions  []user `json:"mentions"`
}

// maxContent bounds a message's content: Discord's own limit is 4,000
// characters for Nitro users.
const maxContent = 16 << 10

// decodeMessage decodes a MESSAGE_CREATE's data. Every id must be a
// snowflake; content is bounded.
func decodeMessage(d []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(d, &m); err != nil {
		return Message{}, fmt.Errorf("%w: MESSAGE_CREATE: %v", errFrame, err)
	}
	for _, id := range []string{m.ID, m.ChannelID, m.Author.ID} {
		if !snowflake(id) {
			return Message{}, fmt.Errorf("%w: MESSAGE_CREATE: id %q is not a snowflake", errFrame, clipID(id))
		}
	}
	for _, id := range []string{m.GuildID, m.WebhookID} {
		if id != "" && !snowflake(id) {
			return Message{}, fmt.Errorf("%w: MESSAGE_CREATE: id %q is not a snowflake", errFrame, clipID(id))
		}
	}
	if len(m.Mentions) > 100 {
		return Message{}, fmt.Errorf("%w: MESSAGE_CREATE: %d mentions", errFrame, len(m.Mentions))
	}
	for _, u := range m.Mentions {
		if !snowflake(u.ID) {
			return Message{}, fmt.Errorf("%w: MESSAGE_CREATE: mention %q is not a snowflake", errFrame, clipID(u.ID))
		}
	}
	if len(m.Content) > maxContent {
		return Message{}, fmt.Errorf("%w: MESSAGE_CREATE: content of %d bytes", errFrame, len(m.Content))
	}
	return m, nil
}

// Snowflake reports whether s is a Discord id: a decimal uint64 without
// leading zeros.
func Snowflake(s string) bool { return snowflake(s) }

func snowflake(s string) bool {
	if s == "" || len(s) > 20 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func clipID(s string) string { return textesc.Cut(s, 24+len("…"), "…") }

// identify is op 2's data.
type identify struct {
	Token      string            `json:"token"`
	Intents    int               `json:"intents"`
	Properties map[string]string `json:"properties"`
}

// resume is op 6's data.
type resume struct {
	Token     string `json:"token"`
	SessionID string `json:"session_id"`
	Seq       int64  `json:"seq"`
}

// outFrame is a frame claw sends.
type outFrame struct {
	Op int `json:"op"`
	D  any `json:"d"`
}

// Close codes after which claw does not reconnect: the token, the
// intents or the shard settings are wrong, and trying again would be
// refused the same way (and count against the identify limit).
func fatalClose(code int) bool {
	switch code {
	case 4004, 4010, 4011, 4012, 4013, 4014:
		return true
	}
	return false
}

// closeMeaning names a fatal close code for the operator.
func closeMeaning(code int) string {
	switch code {
	case 4004:
		return "authentication failed: the token is wrong"
	case 4010:
		return "invalid shard"
	case 4011:
		return "sharding required"
	case 4012:
		return "invalid API version"
	case 4013:
		return "invalid intents"
	case 4014:
		return "disallowed intents: enable MESSAGE CONTENT INTENT for the bot in the developer portal"
	}
	return "closed"
}
