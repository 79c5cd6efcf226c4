// Drives `toolport acp` with the official ACP TypeScript SDK through toolport's question before
// a destructive call: the agent asks `session/request_permission`, this client answers with the
// next of cfg.answers (an optionId), and prints what it was asked and what each prompt replied
// as one JSON object on stdout; tests/it/trust/confirm.rs asserts on it. The SDK validates the
// request against the ACP schema, so a malformed one fails this script.
//
//   node permission.mjs '<json config>'
//   config: { toolport, home, cwd, server: {command, args}, answers: ["allow_once", …] }
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const cfg = JSON.parse(process.argv[2]);

const agent = spawn(cfg.toolport, ["--home", cfg.home, "acp"], { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const updates = [];
const asked = [];
const answers = [...cfg.answers];

const app = acp
  .client({ name: "toolport-acp-permission-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    asked.push(params);
    return { outcome: { outcome: "selected", optionId: answers.shift() } };
  });

const result = await app.connectWith(stream, async (ctx) => {
  await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const server = { name: "notes", command: cfg.server.command, args: cfg.server.args, env: [] };
  const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: cfg.cwd, mcpServers: [server] });
  const replies = [];
  for (let i = 0; i < cfg.answers.length; i++) {
    const seen = updates.length;
    const response = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: `/call delete_note {"id": "${i}"}` }],
    });
    const text = updates
      .slice(seen)
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
      .map((u) => u.content.text)
      .join("");
    replies.push({ stopReason: response.stopReason, text });
  }
  return { sessionId, asked, replies };
});

agent.stdin.end();
await new Promise((r) => agent.once("exit", r));
process.stdout.write(JSON.stringify(result) + "\n");
