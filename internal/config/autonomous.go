package config

import "time"

// Autonomous is the [autonomous] table: the intervals and bounds of an
// autonomous run (claw agent --autonomous). A zero bound takes the
// default; max_tokens = 0 is no token budget.
type Autonomous struct {
	// The wait before the next turn, by the state the last turn left.
	Engaged  Duration `toml:"engaged" json:"engaged"`
	Working  Duration `toml:"working" json:"working"`
	Foraging Duration `toml:"foraging" json:"foraging"`
	Resting  Duration `toml:"resting" json:"resting"`
	// MaxTurns bounds the turns of one run.
	MaxTurns int `toml:"max_turns" json:"max_turns"`
	// MaxToolCalls bounds the tool calls of one run.
	MaxToolCalls int `toml:"max_tool_calls" json:"max_tool_calls"`
	// MaxTokens bounds the model tokens (input and output) of one run.
	MaxTokens int `toml:"max_tokens" json:"max_tokens"`
	// MaxErrors is how many failed turns in a row stop the run; Backoff
	// is the wait after the first, doubled after each next one.
	MaxErrors int      `toml:"max_errors" json:"max_errors"`
	Backoff   Duration `toml:"backoff" json:"backoff"`
}

// defaultAutonomous are poc-agent's intervals and its bound of 20 turns.
func defaultAutonomous() Autonomous {
	return Autonomous{
		Engaged: Duration{5 * time.Second}, Working: Duration{3 * time.Second},
		Foraging: Duration{30 * time.Second}, Resting: Duration{300 * time.Second},
		MaxTurns: 20, MaxToolCalls: 100, MaxErrors: 3, Backoff: Duration{time.Second},
	}
}

// maxInterval bounds an autonomous interval and the backoff.
const maxInterval = 24 * time.Hour

func (s *source) validateAutonomous(a *Autonomous) {
	for _, k := range []struct {
		key string
		d   Duration
	}{{"engaged", a.Engaged}, {"working", a.Working}, {"foraging", a.Foraging}, {"resting", a.Resting}, {"backoff", a.Backoff}} {
		s.checkDuration("autonomous."+k.key, k.d, maxInterval)
	}
	s.checkRange("autonomous.max_turns", a.MaxTurns, 1, 10000)
	s.checkRange("autonomous.max_tool_calls", a.MaxToolCalls, 1, 100000)
	s.checkRange("autonomous.max_tokens", a.MaxTokens, 0, 1<<40)
	s.checkRange("autonomous.max_errors", a.MaxErrors, 1, 100)
}
