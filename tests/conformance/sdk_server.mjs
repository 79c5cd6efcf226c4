// A server built the way the conformance suite's TypeScript reference server is: the
// TypeScript SDK's own `McpServer` (npm `@modelcontextprotocol/sdk`, installed as a dependency
// of server-everything by tests/peers/install.sh) over streamable HTTP sessions, whose tools ask
// the client while the call waits (`server.server.elicitInput`, `createMessage`, on the call's
// own response stream), and which also answers the stateless 2026-07-28 revision
// (`server/discover`, then every request on its own) by handing each request to the same
// `McpServer` through an in-memory client, as the reference server does. That client answers
// nobody's questions, so on the stateless revision a tool that asks is told "Method not found"
// and `resources/subscribe` does not exist: only a session gets the questions to the person.
//
//   node sdk_server.mjs PEERS PORT
//
// PEERS is the folder tests/peers/install.sh prints (its node_modules hold the SDK and zod).
// Serves http://127.0.0.1:PORT/mcp and prints `sdk server listening on port PORT` once it
// accepts connections. What the tools say is what the suite's scenarios (tools-call-elicitation,
// tools-call-sampling, elicitation-sep1034-defaults, elicitation-sep1330-enums,
// resources-subscribe) and tests/it/serve/sdk_server.rs expect.
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { join } from "node:path";

const [peers, port] = process.argv.slice(2);
if (!peers || !port) {
  console.error("usage: node sdk_server.mjs PEERS PORT");
  process.exit(2);
}
const require = createRequire(join(peers, "package.json"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { InMemoryTransport } = require("@modelcontextprotocol/sdk/inMemory.js");
const {
  isInitializeRequest,
  ResultSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} = require("@modelcontextprotocol/sdk/types.js");
const { z } = require("zod");

const STATELESS = "2026-07-28";

const SEP1034_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", description: "Your name", default: "John Doe" },
    age: { type: "integer", description: "Your age", default: 30 },
    score: { type: "number", description: "Your score", default: 95.5 },
    status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
    verified: { type: "boolean", description: "Verified?", default: true },
  },
};

const SEP1330_SCHEMA = {
  type: "object",
  properties: {
    untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
    titledSingle: {
      type: "string",
      oneOf: [
        { const: "value1", title: "First Option" },
        { const: "value2", title: "Second Option" },
        { const: "value3", title: "Third Option" },
      ],
    },
    legacyEnum: {
      type: "string",
      enum: ["opt1", "opt2", "opt3"],
      enumNames: ["Option One", "Option Two", "Option Three"],
    },
    untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
    titledMulti: {
      type: "array",
      items: {
        anyOf: [
          { const: "value1", title: "First Choice" },
          { const: "value2", title: "Second Choice" },
          { const: "value3", title: "Third Choice" },
        ],
      },
    },
  },
};

const text = (value) => ({ content: [{ type: "text", text: value }] });

/// The server one session (or one stateless request) talks to.
function createMcpServer() {
  const server = new McpServer(
    { name: "toolport-sdk-fixture", version: "1.0.0" },
    { capabilities: { tools: {}, resources: { subscribe: true } } },
  );
  // The question goes on the call's own response stream (SEP-2260), as the reference's does.
  const onTheCall = (extra) => ({ relatedRequestId: extra.requestId });
  const elicit = async (message, requestedSchema, extra, said) => {
    try {
      const answer = await server.server.elicitInput({ message, requestedSchema }, onTheCall(extra));
      return text(`${said}: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
    } catch (error) {
      return text(`Elicitation not supported or error: ${error.message}`);
    }
  };

  server.registerTool(
    "test_elicitation",
    { description: "Asks the client for its response", inputSchema: { message: z.string() } },
    ({ message }, extra) =>
      elicit(
        message,
        {
          type: "object",
          properties: { response: { type: "string", description: "User's response" } },
          required: ["response"],
        },
        extra,
        "User response",
      ),
  );
  server.registerTool(
    "test_elicitation_sep1034_defaults",
    { description: "Elicits a form whose fields carry defaults" },
    (extra) =>
      elicit("Please review and update the form fields with defaults", SEP1034_SCHEMA, extra, "Elicitation completed"),
  );
  server.registerTool(
    "test_elicitation_sep1330_enums",
    { description: "Elicits a form with every enum shape" },
    (extra) => elicit("Please select options from the enum fields", SEP1330_SCHEMA, extra, "Elicitation completed"),
  );
  server.registerTool(
    "test_sampling",
    { description: "Asks the client to sample a message", inputSchema: { prompt: z.string() } },
    async ({ prompt }, extra) => {
      try {
        const answer = await server.server.createMessage(
          { messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 },
          onTheCall(extra),
        );
        return text(`LLM response: ${answer.content?.text ?? "No response"}`);
      } catch (error) {
        return text(`Sampling not supported or error: ${error.message}`);
      }
    },
  );

  server.registerResource(
    "watched-resource",
    "test://watched-resource",
    { description: "Subscribable", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content." }] }),
  );
  const subscribed = new Set();
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscribed.add(request.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
  return server;
}

/// The reference's stateless path: a fresh server and an in-memory client per request, the
/// client claiming sampling and elicitation but answering neither.
async function dispatch(method, params) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer();
  await server.connect(serverSide);
  const client = new Client(
    { name: "stateless-dispatch", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  await client.connect(clientSide);
  try {
    return await client.request({ method, params }, ResultSchema);
  } finally {
    await client.close();
    await server.close();
  }
}

// The 2026-07-28 results that carry caching hints (SEP-2549), which a client requires.
const CACHEABLE = new Set(["server/discover", "tools/list", "resources/list", "resources/templates/list", "resources/read"]);

/// A stateless result as the revision wants it: `resultType`, and caching hints where due.
function complete(method, result) {
  return { resultType: "complete", ...(CACHEABLE.has(method) ? { ttlMs: 0, cacheScope: "private" } : {}), ...result };
}

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function stateless(req, res, body) {
  const { id = null, method, params = {} } = body;
  if (method === "server/discover") {
    return json(res, 200, {
      jsonrpc: "2.0",
      id,
      result: complete(method, {
        supportedVersions: [STATELESS],
        capabilities: { tools: {}, resources: {} },
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "toolport-sdk-fixture", version: "1.0.0" } },
      }),
    });
  }
  if (method === "subscriptions/listen") {
    // Acknowledged and held open until the client goes: this server's lists never change.
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const ack = {
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: { "io.modelcontextprotocol/subscriptionId": String(id) }, notifications: {} },
    };
    res.write(`event: message\ndata: ${JSON.stringify(ack)}\n\n`);
    return;
  }
  if (["tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read"].includes(method)) {
    try {
      const result = await dispatch(method, params);
      return json(res, 200, { jsonrpc: "2.0", id, result: complete(method, result) });
    } catch (e) {
      return json(res, 200, { jsonrpc: "2.0", id, error: { code: e.code ?? -32603, message: e.message } });
    }
  }
  // `resources/subscribe`, `logging/setLevel` and the rest are session methods.
  return json(res, 404, { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
}

const sessions = new Map();

async function handle(req, res) {
  if (new URL(req.url, "http://localhost").pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  const sessionId = req.headers["mcp-session-id"];
  if (req.method !== "POST") {
    const transport = sessions.get(sessionId);
    if (!transport) return json(res, 404, { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } });
    return transport.handleRequest(req, res);
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
  }
  const version = body.params?._meta?.["io.modelcontextprotocol/protocolVersion"] ?? req.headers["mcp-protocol-version"];
  if (!sessionId && version === STATELESS) return stateless(req, res, body);
  if (sessionId) {
    const transport = sessions.get(sessionId);
    if (!transport) return json(res, 404, { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } });
    return transport.handleRequest(req, res, body);
  }
  if (!isInitializeRequest(body)) {
    return json(res, 400, { jsonrpc: "2.0", id: body.id ?? null, error: { code: -32000, message: "Invalid or missing session ID" } });
  }
  const server = createMcpServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.set(id, transport),
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
    server.close();
  };
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

createServer((req, res) => {
  handle(req, res).catch((error) => {
    console.error("sdk server:", error);
    if (!res.headersSent) json(res, 500, { jsonrpc: "2.0", id: null, error: { code: -32603, message: "Internal error" } });
  });
}).listen(Number(port), "127.0.0.1", () => console.log(`sdk server listening on port ${port}`));
