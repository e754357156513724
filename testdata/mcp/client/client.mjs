// A foreign MCP client (the official TypeScript SDK) for claw's tests.
//
//   node client.mjs CALLS -- COMMAND [ARG...]
//
// spawns COMMAND as a stdio MCP server, lists its tools, makes the calls
// in CALLS (a JSON array of {"name", "arguments"}) and prints one JSON
// object: {"tools": [names], "calls": [{"name", "isError", "text", "raw"}]}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
if (dash !== 1 || argv.length < 3) {
  process.stderr.write("usage: node client.mjs CALLS -- COMMAND [ARG...]\n");
  process.exit(2);
}
const calls = JSON.parse(argv[0]);
const [command, ...args] = argv.slice(2);

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "claw-test-client", version: "1.0.0" });
await client.connect(transport);

const out = { server: client.getServerVersion()?.name, tools: [], calls: [] };
const { tools } = await client.listTools();
out.tools = tools.map((t) => t.name).sort();
for (const c of calls) {
  const res = await client.callTool({ name: c.name, arguments: c.arguments ?? {} });
  const text = (res.content ?? []).filter((x) => x.type === "text").map((x) => x.text).join("\n");
  out.calls.push({ name: c.name, isError: res.isError === true, text, raw: JSON.stringify(res) });
}
await client.close();
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
