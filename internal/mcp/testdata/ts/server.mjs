// MCP servers built on the official TypeScript SDK, as users ship them, for
// the tests of internal/mcp. The first argument picks the transport:
//   stdio      the server on stdin/stdout
//   stateless  Streamable HTTP without sessions (a fresh transport per request)
//   stateful   Streamable HTTP with sessions (Mcp-Session-Id)
//   sse        the older HTTP+SSE transport (GET /sse, POST /messages)
//   notools    stdio, a server that lists no tools
// An HTTP server listens on 127.0.0.1 on a free port and prints its URL as
// the first line of stdout.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { z } from "zod";

const mode = process.argv[2] ?? "stdio";

function newServer() {
  const server = new McpServer({ name: "ts-test-server", version: "1.0.0" });
  if (mode === "notools") return server;
  server.registerTool(
    "add",
    { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: `sum=${a + b} via ${mode}` }] }),
  );
  // ask_name asks on the call's own stream; ask_later on the standalone
  // GET stream, as a server does for a request not tied to a call.
  for (const [name, related] of [["ask_name", true], ["ask_later", false]]) {
    server.registerTool(
      name,
      { description: "Ask the user for a name (elicitation)", inputSchema: {} },
      async (_args, extra) => {
        const res = await server.server.elicitInput({
          message: "What is your name?",
          requestedSchema: {
            type: "object",
            properties: {
              name: { type: "string", title: "Name", default: "Ada" },
              age: { type: "integer", title: "Age", default: 36 },
            },
            required: ["name"],
          },
        }, related ? { relatedRequestId: extra.requestId } : undefined);
        return { content: [{ type: "text", text: `action=${res.action} content=${JSON.stringify(res.content ?? null)}` }] };
      },
    );
  }
  // ask_form asks for one field of every kind a form may have; the SDK
  // checks an accepted answer against the schema before the tool sees it.
  server.registerTool(
    "ask_form",
    { description: "Ask the user to fill a form of every field kind (elicitation)", inputSchema: {} },
    async () => {
      const res = await server.server.elicitInput({
        message: "Set up the project",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", title: "Project name", minLength: 2, maxLength: 20, default: "demo" },
            email: { type: "string", title: "Owner email", format: "email" },
            replicas: { type: "integer", title: "Replicas", minimum: 1, maximum: 9, default: 3 },
            ratio: { type: "number", title: "Ratio", description: "between 0 and 1" },
            public: { type: "boolean", title: "Public", default: false },
            region: { type: "string", title: "Region", oneOf: [{ const: "eu", title: "Europe" }, { const: "us", title: "United States" }], default: "eu" },
            tier: { type: "string", title: "Tier", enum: ["free", "pro", "team"] },
            features: { type: "array", title: "Features", items: { type: "string", enum: ["ci", "docs", "lint"] }, default: ["ci"], maxItems: 2 },
          },
          required: ["name", "email", "tier"],
        },
      });
      return { content: [{ type: "text", text: `action=${res.action} content=${JSON.stringify(res.content ?? null)}` }] };
    },
  );
  return server;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

function listen(handler, path = "/mcp") {
  const srv = http.createServer((req, res) => {
    handler(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  srv.listen(0, "127.0.0.1", () => {
    process.stdout.write(`http://127.0.0.1:${srv.address().port}${path}\n`);
  });
}

if (mode === "stdio" || mode === "notools") {
  await newServer().connect(new StdioServerTransport());
} else if (mode === "stateless") {
  listen(async (req, res) => {
    const body = req.method === "POST" ? await readBody(req) : undefined;
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
} else if (mode === "stateful") {
  const transports = new Map();
  listen(async (req, res) => {
    const body = req.method === "POST" ? await readBody(req) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? transports.get(id) : undefined;
    if (!transport) {
      if (id || req.method !== "POST" || body?.method !== "initialize") {
        // What the SDK's own stateful example answers.
        res.writeHead(400, { "Content-Type": "application/json" }).end(JSON.stringify({
          jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: Invalid or missing session ID" }, id: null,
        }));
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => transports.set(sid, transport),
      });
      transport.onclose = () => transports.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
} else if (mode === "sse") {
  const transports = new Map();
  listen(async (req, res) => {
    const url = new URL(req.url, "http://localhost");
    if (req.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      transports.set(transport.sessionId, transport);
      res.on("close", () => transports.delete(transport.sessionId));
      await newServer().connect(transport);
      return;
    }
    const transport = transports.get(url.searchParams.get("sessionId"));
    if (req.method !== "POST" || !transport) {
      res.writeHead(404).end();
      return;
    }
    await transport.handlePostMessage(req, res, await readBody(req));
  }, "/sse");
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
