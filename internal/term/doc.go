// Package term is claw's presentation on a terminal: the claw: lines of
// standard error, the model's text as it streams (with a margin no model
// can fake and a spinner while it thinks), the line input of the REPL
// (line editing and history, typeahead thrown away before a question),
// the one terminal approver, and the passphrase read without echo.
//
// # Output rules
//
// As age's tui.go states them:
//   - data goes to standard output, in a stable shape with -o json;
//   - everything else goes to standard error with a "claw:" prefix, no
//     capitalised initials and no period at the end;
//   - prompts go to the terminal.
//
// Everything a model, a tool or a request could shape is escaped before
// it is shown (see internal/textesc), so no line of its own can pass for
// one of claw's.
//
// # Approvals
//
// [Approver] asks a person at the terminal, through the [LineInput] that
// owns it: what was typed before the question is discarded (a "y" typed at
// a prompt a model drew approves nothing), and a question that timed out
// keeps its read in flight, which a later question refuses to race.
// [PassphraseApprover] also asks for the passphrase through that reader,
// without echo; [Passphrase] asks it on a terminal no reader owns.
package term
