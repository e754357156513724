// Package approvals is the queue of actions waiting for a human, and the
// HTTP API through which a human (or a remote requester) uses it.
//
// A [Queue] is in memory and safe for concurrent use. Each pending
// request is bound to the digest of the exact action it would approve
// (argv, paths, sandbox plan): a decision must quote that digest, so an
// approval can never be replayed onto a different action. A request that
// nobody decides before its deadline expires with the result "timeout";
// a late decision, or a second decision on the same request, is refused.
//
// # In the daemon
//
// The queue implements [broker.Approver], so the broker can ask through
// it and block until a human answers:
//
//	q := approvals.NewQueue(cfg.Security.ApprovalTimeout.Duration)
//	b := broker.New(broker.Config{..., Approver: q})
//	mux := http.NewServeMux()
//	q.Routes(mux, 1<<20) // mounted behind the bearer-token check
//
// # HTTP
//
//	GET  /approvals                        → 200 {"pending":[…]}
//	POST /approvals/{id}                   {"decision":"approve"|"approve_conversation"|"approve_grant"|"reject","approver":"alice","action_sha256":"sha256:…"}
//	                                       → 200 {"id","result":"approved"|"rejected"}, 404, 409
//	                                       (409 "estop": no approval while Queue.Stopped reports a stop)
//	POST /approvals/requests               {"tool","summary","args","risk","reasons":[{"id","msg"}],"action_sha256","requester"}
//	                                       → 201 {"id","expires"}
//	GET  /approvals/{id}/wait?timeout=25s  → 200 {"id","status":"pending"|"approved"|"rejected"|"timeout","by"}
//
// Every error is {"error":{"code":"…","message":"…"}}. Bodies are bounded
// and decoded strictly (unknown fields are rejected).
//
// A pending request shows the action's arguments as "args": the JSON of
// [broker.Request].Args, secrets redacted by the requester's broker, at
// most broker.MaxArgs bytes (optional when a request is submitted). They
// are for the eye: the decision binds to action_sha256, the digest of
// the whole action, whatever args shows. A program that prints them must
// escape them, as claw serve pending does.
//
// # From another process
//
// A [Client] talks to a running daemon over its unix socket
// ("unix:/path/claw.sock") or loopback HTTP ("http://127.0.0.1:8787"). It
// implements [broker.Approver] too: it submits the request, then long-polls
// until the request is decided, expires, or its context ends. Arguments
// larger than the daemon accepts (413) are replaced by a note that says
// so, and the request is submitted again.
package approvals
