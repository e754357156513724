// A SynthesisAgent bridge client written from the protocol document, for
// claw's bridge: hello, a tool call that is allowed, one that is denied,
// and a permission request. It prints one line per answer and exits 0
// when every answer came, 1 otherwise.
//
//   SYNTHESIS_BRIDGE_TOKEN=... node --experimental-websocket client.mjs ws://127.0.0.1:18801/bridge SESSION
//
// Node 22 and later have WebSocket without the flag.
const [url, session] = process.argv.slice(2);
const token = process.env.SYNTHESIS_BRIDGE_TOKEN;
if (!url || !session || !token) {
  console.error("usage: SYNTHESIS_BRIDGE_TOKEN=... node client.mjs URL SESSION");
  process.exit(2);
}

const steps = [
  { type: "tool_call", call_id: "tc_001", tool: "time", args: {} },
  { type: "tool_call", call_id: "tc_002", tool: "shell", args: { command: "rm -rf /" } },
  { type: "permission_request", request_id: "abxyz", tool: "Bash", args: { command: "make test" }, rationale: "run the tests" },
];
const ws = new WebSocket(url);
const fail = (msg) => { console.error("bridge client: " + msg); process.exit(1); };
const timer = setTimeout(() => fail("timed out"), 120000);
let step = 0;
const next = () => {
  if (step === steps.length) { clearTimeout(timer); ws.close(1000); process.exit(0); }
  ws.send(JSON.stringify(steps[step++]));
};

ws.onopen = () => ws.send(JSON.stringify({ type: "hello", openclaw_session: session, claude_session: "node-client", pid: process.pid, token }));
ws.onclose = (e) => fail(`closed: ${e.code} ${e.reason}`);
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  switch (m.type) {
  case "ping":
    ws.send(JSON.stringify({ type: "pong", ts: m.ts }));
    return;
  case "hello_ack":
    console.log(`hello_ack tools=${m.tools.map((t) => t.name).sort().join(",")} session=${m.session_meta.session}`);
    return next();
  case "tool_result":
    console.log(m.ok ? `${m.call_id} ok ${m.result.status}` : `${m.call_id} error ${m.error}`);
    return next();
  case "permission_reply":
    console.log(`permission ${m.request_id} ${m.behavior}`);
    return next();
  case "inbound_message":
    console.log(`inbound ${m.request_id} ${JSON.stringify(m.content)}`);
    return;
  default:
    fail("unexpected frame " + e.data);
  }
};
