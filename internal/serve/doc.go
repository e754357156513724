// Package serve is claw's daemon: an HTTP gateway on a unix socket (and,
// optionally, a loopback TCP address) in front of the agent, the
// approvals queue, the receipt log and the emergency stop.
//
// # Security model
//
// The socket lives in a 0700 directory and is itself 0600. Every endpoint
// but GET /health needs the bearer token from the token file, which must
// be mode 0600 (the server refuses to start otherwise); tokens are
// compared in constant time. A TCP listener may only bind a loopback
// address. Request bodies are bounded (413 beyond the limit), headers
// must arrive within the read-header timeout, and every request runs
// under the request timeout. Every error is
// {"error":{"code":"…","message":"…"}}.
//
// # Endpoints
//
//	GET    /health                       liveness, no token
//	GET    /status                       autonomy, policy digest, sandbox, receipt head, estop
//	GET    /tools                        the agent's tools
//	POST   /chat                         {"conversation","message"} → {"conversation","reply","tool_calls"}
//	                                     (Accept: text/event-stream: "delta" events, then "done")
//	GET    /memory/search?q=…&limit=N    memory hits
//	GET    /receipts?after=SEQ&limit=N   signed receipt lines, paged
//	POST   /estop, DELETE /estop         engage or clear the emergency stop (receipted)
//	GET    /approvals …                  the approvals API, see package approvals
//	POST   /channels/{name}/messages     {"session","request_id","content","meta"} → 202 {"request_id"}:
//	                                     a message for a session of a channel (the bridge's inbound_message)
//	POST   /autonomous                   {"task","conversation"|"new_conversation",["max_turns"]} → 201 {"run","conversation"}
//	GET    /autonomous[/{id}]            a run's state, turns, tool calls and stop reason (or all runs)
//	POST   /autonomous/{id}/message      {"message"} → 202: the person's message preempts the run
//	DELETE /autonomous/{id}              stop the run; answers its final status
//	GET    /metrics                      Prometheus text format
//
// Turns of one conversation are serialized; different conversations run
// concurrently. An autonomous run owns its conversation: one run per
// conversation, and /chat in it is refused (409). The emergency stop, a
// successful reload and the shutdown stop every run.
//
// # Lifecycle
//
// [Server.Serve] runs until its context ends, then stops accepting,
// lets running requests finish for up to ShutdownTimeout, cancels the
// rest, and writes a final receipt checkpoint. [Server.Reload] swaps in
// new policies (the Reload hook compiles and tests them first) and writes
// a policy_loaded receipt, or keeps the old ones and says why.
package serve
