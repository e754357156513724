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
//	POST /approvals/{id}                   {"decision":"approve"|"reject","approver":"alice","action_sha256":"sha256:…"}
//	                                       → 200 {"id","result":"approved"|"rejected"}, 404, 409
//	POST /approvals/requests               {"tool","summary","risk","reasons":[{"id","msg"}],"action_sha256","requester"}
//	                                       → 201 {"id","expires"}
//	GET  /approvals/{id}/wait?timeout=25s  → 200 {"id","status":"pending"|"approved"|"rejected"|"timeout","by"}
//
// Every error is {"error":{"code":"…","message":"…"}}. Bodies are bounded
// and decoded strictly (unknown fields are rejected).
//
// # From another process
//
// A [Client] talks to a running daemon over its unix socket
// ("unix:/path/claw.sock") or loopback HTTP ("http://127.0.0.1:8787"). It
// implements [broker.Approver] too: it submits the request, then long-polls
// until the request is decided, expires, or its context ends.
package approvals
