// Drives `toolport acp` with the official ACP TypeScript SDK and prints what happened as one
// JSON object on stdout; tests/it/acp/agent.rs asserts on it. The SDK validates every message it
// receives against the ACP schema, so a malformed response or update fails this script.
//
//   node client.mjs '<json config>'
//   config: { toolport, home, cwd, demo: {command, args}, httpUrl }
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const cfg = JSON.parse(process.argv[2]);

const agent = spawn(cfg.toolport, ["--home", cfg.home, "acp"], { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

// Every session/update, in arrival order, per session.
const updates = new Map();
const updatesOf = (id) => {
  if (!updates.has(id)) updates.set(id, []);
  return updates.get(id);
};

const app = acp.client({ name: "toolport-acp-test" }).onNotification(
  acp.methods.client.session.update,
  ({ params }) => {
    updatesOf(params.sessionId).push(params.update);
  },
);

const demo = (prefix, extra = {}) => ({
  name: `demo-${prefix}`,
  command: cfg.demo.command,
  args: [...cfg.demo.args, "--prefix", `${prefix}_`],
  env: [{ name: "DEMO_SECRET", value: "not-to-be-printed" }],
  ...extra,
});

async function waitFor(check, what, ms = 5000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const result = await app.connectWith(stream, async (ctx) => {
  const out = {};

  // A prompt's answer: the stop reason and the text of the message chunks it produced.
  const prompt = async (sessionId, text) => {
    const seen = updatesOf(sessionId).length;
    const started = Date.now();
    const response = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    const chunks = updatesOf(sessionId)
      .slice(seen)
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
      .map((u) => u.content.text);
    return { stopReason: response.stopReason, text: chunks.join(""), ms: Date.now() - started, done: Date.now() };
  };
  const commandsOf = async (sessionId) => {
    await waitFor(
      () => updatesOf(sessionId).some((u) => u.sessionUpdate === "available_commands_update"),
      `available_commands_update for ${sessionId}`,
    );
    return updatesOf(sessionId)
      .find((u) => u.sessionUpdate === "available_commands_update")
      .availableCommands.map((c) => c.name);
  };

  out.initialize = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });

  // One session with a stdio and an HTTP server, both in the spec's array form.
  const servers = [demo("a")];
  if (cfg.httpUrl) {
    servers.push({ type: "http", name: "everything", url: cfg.httpUrl, headers: [{ name: "X-Test", value: "1" }] });
  }
  const s1 = (await ctx.request(acp.methods.agent.session.new, { cwd: cfg.cwd, mcpServers: servers })).sessionId;
  out.s1 = s1;
  out.commands = await commandsOf(s1);
  out.mcp = await prompt(s1, "/mcp");
  out.call = await prompt(s1, '/call a_echo {"message": "hello from acp"}');
  out.callError = await prompt(s1, "/call a_fail");
  out.freeText = await prompt(s1, "What is the weather like?");
  if (cfg.httpUrl) {
    out.httpCall = await prompt(s1, '/call echo {"message": "over http"}');
  }
  out.extCall = await ctx.request("_toolport/tools/call", { sessionId: s1, name: "a_add", arguments: { a: 2, b: 3 } });
  out.extList = (await ctx.request("_toolport/tools/list", { sessionId: s1 })).tools.map(
    (t) => t.function?.name ?? t.name,
  );

  // session/load re-creates a session under the client's id with the servers it sends now.
  out.load = await ctx.request(acp.methods.agent.session.load, {
    sessionId: "loaded-session",
    cwd: cfg.cwd,
    mcpServers: [demo("l")],
  });
  out.loadCommands = await commandsOf("loaded-session");
  out.loadMcp = await prompt("loaded-session", "/mcp");

  // Two sessions at once, each with its own server: a slow call in one must not hold up the other.
  const [s2, s3] = (
    await Promise.all([
      ctx.request(acp.methods.agent.session.new, { cwd: cfg.cwd, mcpServers: [demo("b")] }),
      ctx.request(acp.methods.agent.session.new, { cwd: cfg.cwd, mcpServers: [demo("c")] }),
    ])
  ).map((r) => r.sessionId);
  const [slow, fast] = await Promise.all([
    prompt(s2, '/call b_sleep {"ms": 1500}'),
    prompt(s3, '/call c_echo {"message": "fast"}'),
  ]);
  out.parallel = { slow, fast, fastFirst: fast.done < slow.done };
  out.s2Mcp = await prompt(s2, "/mcp");
  out.s3Mcp = await prompt(s3, "/mcp");

  // session/cancel stops a running call.
  const running = prompt(s2, '/call b_sleep {"ms": 20000}');
  await new Promise((r) => setTimeout(r, 300));
  await ctx.notify(acp.methods.agent.session.cancel, { sessionId: s2 });
  out.cancelled = await running;

  return out;
});

agent.stdin.end();
await new Promise((r) => agent.once("exit", r));
process.stdout.write(JSON.stringify(result) + "\n");
