package tool

import "github.com/clawsec/claw/internal/toolkind"

// YieldToUser is the tool an autonomous run (claw agent --autonomous)
// offers the model, and only such a run: calling it ends the run's
// working streak and waits for the person, instead of acting again on the
// next tick. It is a tool call like any other: decided by the gate and
// receipted by the broker. [All] and [Lookup] leave it out, so it is in no
// other catalog and no tools_allow list can name it.
var YieldToUser = Spec{
	Name:        toolkind.YieldToUser,
	Description: "Stop working on your own and wait for the person: call it when the task is done, when you need them, or when there is nothing useful left to do.",
	Risk:        "low",
	Props: []Prop{
		{Name: "reason", Type: "string", Description: "one sentence: why you are stopping"},
	},
}
