// A program built on the official Claude Agent SDK that runs tiny-go
// (pathToClaudeCodeExecutable) through one scenario and prints what it
// saw as one JSON object on stdout; the Go test (sdk_test.go) asserts on
// it, on the session file, the file system and /proc. Usage:
// node client.mjs SCENARIO, with the executable in $HL_AGENT, the working
// directory in $HL_CWD and, for "resume", the session in $HL_SESSION.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const scenario = process.argv[2];
const cwd = process.env.HL_CWD;
const seen = { scenario, messages: [], permissions: [], stderr: "" };
const base = {
  pathToClaudeCodeExecutable: process.env.HL_AGENT,
  cwd,
  env: process.env,
  stderr: (s) => { seen.stderr += s; },
};

async function untilFile(path, ms = 30000) {
  const end = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > end) throw new Error("timed out waiting for " + path);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// collect reads every message of q; onMessage may act on each.
async function collect(q, onMessage = async () => {}) {
  for await (const m of q) {
    seen.messages.push(m);
    await onMessage(m);
  }
}

// collectThrown is collect for a run whose last turn fails: tiny-go then
// exits 1, as Claude Code does, and the SDK throws; what it threw is kept.
async function collectThrown(q, onMessage) {
  try {
    await collect(q, onMessage);
  } catch (e) {
    seen.thrown = String(e.message || e);
  }
}

// prompts yields the given user messages and then waits for done, so the
// input stays open until the run is over (as an SDK host does).
async function* prompts(messages, done) {
  for (const m of messages) yield m;
  await done;
}

function user(content) {
  return { type: "user", message: { role: "user", content }, parent_tool_use_id: null, session_id: "" };
}

const scenarios = {
  // A streamed query: init, assistant and result messages.
  async stream() {
    const systemPrompt = process.env.HL_SYSTEM || undefined;
    await collect(query({ prompt: "say hello", options: { ...base, includePartialMessages: true, systemPrompt } }));
  },

  // canUseTool: the first Bash call is allowed with a changed command,
  // the second denied with a message.
  async permissions() {
    const q = query({
      prompt: "make two files",
      options: {
        ...base,
        canUseTool: async (toolName, input, { toolUseID }) => {
          seen.permissions.push({ toolName, input, toolUseID });
          if (seen.permissions.length === 1) {
            return { behavior: "allow", updatedInput: { ...input, command: "echo changed > allowed.txt" } };
          }
          return { behavior: "deny", message: "not this one, please" };
        },
      },
    });
    await collect(q);
  },

  // interrupt() while a long command runs.
  async interrupt() {
    const q = query({ prompt: "run the long command", options: { ...base, permissionMode: "bypassPermissions" } });
    await collectThrown(q, async (m) => {
      if (m.type === "assistant" && m.message.content.some((b) => b.type === "tool_use")) {
        await untilFile(join(process.env.MARKS || cwd, "sleep.pid"));
        seen.interrupt = await q.interrupt();
      }
    });
  },

  // resume: a second query continues the first one's session.
  async resume() {
    const systemPrompt = { type: "preset", preset: "claude_code", append: "Answer in one line." };
    await collect(query({ prompt: "second question", options: { ...base, resume: process.env.HL_SESSION, systemPrompt } }));
  },

  // resume with canUseTool: a call left waiting for permission by a dead
  // tiny-go is asked about again, and allowed.
  async resumeAllow() {
    const canUseTool = async (toolName, input, { toolUseID }) => {
      seen.permissions.push({ toolName, input, toolUseID });
      return { behavior: "allow", updatedInput: input };
    };
    await collect(query({ prompt: "second question", options: { ...base, resume: process.env.HL_SESSION, canUseTool } }));
  },

  // A request tiny-go does not support (rewind_files) gets an error and
  // the session goes on; mcp_status and get_context_usage are answered;
  // set_permission_mode (acceptEdits, sent before the prompt) lets the
  // model's Write run without canUseTool.
  async control() {
    let finish, modeSet;
    const done = new Promise((r) => { finish = r; });
    const ready = new Promise((r) => { modeSet = r; });
    async function* input() {
      await ready;
      yield user("write the notes");
      await done;
    }
    const q = query({ prompt: input(), options: { ...base } });
    try {
      await q.rewindFiles("01a24b90-0000-7000-8000-000000000000");
      seen.unknownControl = "answered";
    } catch (e) {
      seen.unknownControl = String(e.message || e);
    }
    seen.mcpStatus = await q.mcpServerStatus();
    seen.contextUsage = await q.getContextUsage();
    seen.mode = await q.setPermissionMode("acceptEdits");
    modeSet();
    await collect(q, async (m) => { if (m.type === "result") finish(); });
  },

  // A malformed user message: one error result, and the SDK reports the
  // exit.
  async malformed() {
    let finish;
    const done = new Promise((r) => { finish = r; });
    const q = query({ prompt: prompts([{ type: "user", message: { role: "user", content: 42 } }], done), options: { ...base } });
    try {
      await collect(q, async (m) => { if (m.type === "result") finish(); });
    } catch (e) {
      seen.thrown = String(e.message || e);
    }
  },

  // close() while a long command runs: the SDK ends tiny-go's stdin.
  async close() {
    let finish;
    const done = new Promise((r) => { finish = r; });
    const q = query({ prompt: prompts([user("run the long command")], done), options: { ...base, permissionMode: "bypassPermissions" } });
    try {
      await collect(q, async (m) => {
        if (m.type === "assistant" && m.message.content.some((b) => b.type === "tool_use")) {
          await untilFile(join(process.env.MARKS || cwd, "sleep.pid"));
          q.close();
        }
      });
    } catch (e) {
      seen.thrown = String(e.message || e);
    }
    finish();
  },

  // A PreToolUse hook callback that denies Bash.
  async hook() {
    seen.calls = [];
    const denyBash = async (input) => {
      seen.calls.push({ hook: input.hook_event_name, tool: input.tool_name, input: input.tool_input });
      return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no shell today" } };
    };
    const hooks = { PreToolUse: [{ matcher: "Bash", hooks: [denyBash] }] };
    await collect(query({ prompt: "make a file", options: { ...base, hooks, permissionMode: "bypassPermissions" } }));
  },

  // An in-process SDK MCP server whose tool the model calls.
  async mcp() {
    seen.calls = [];
    const add = tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async (args) => {
      seen.calls.push({ tool: "add", args });
      return { content: [{ type: "text", text: `sum=${args.a + args.b}` }] };
    });
    const calc = createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
    const q = query({ prompt: "add 2 and 3", options: { ...base, mcpServers: { calc }, allowedTools: ["mcp__calc__add"] } });
    await collect(q, async (m) => {
      if (m.type === "assistant" && !seen.mcpStatus) seen.mcpStatus = await q.mcpServerStatus();
    });
  },

  // maxBudgetUsd: the run stops once it cost more.
  async budget() {
    const maxBudgetUsd = Number(process.env.HL_BUDGET);
    await collectThrown(query({ prompt: "loop", options: { ...base, maxBudgetUsd, permissionMode: "bypassPermissions" } }));
  },

  // resume of a session that does not exist: the SDK throws the error.
  async resumeUnknown() {
    await collectThrown(query({ prompt: "hello", options: { ...base, resume: process.env.HL_SESSION } }));
  },

  // Options tiny-go refuses ($HL_OPT: schema or session): the SDK throws.
  async refused() {
    const opt = process.env.HL_OPT === "schema"
      ? { outputFormat: { type: "json_schema", schema: { type: "object", properties: { n: { type: "number" } } } } }
      : { sessionId: "01a24b90-0000-7000-8000-0000000000aa" };
    await collectThrown(query({ prompt: "hello", options: { ...base, ...opt } }));
  },

  // forkSession: resume $HL_SESSION as a fork.
  async fork() {
    await collect(query({ prompt: "second question", options: { ...base, resume: process.env.HL_SESSION, forkSession: true } }));
  },

  // One prompt under $HL_MODE; with HL_SET, setPermissionMode(HL_SET)
  // first, and its outcome recorded.
  async mode() {
    let finish, modeSet;
    const done = new Promise((r) => { finish = r; });
    const ready = new Promise((r) => { modeSet = r; });
    async function* input() {
      await ready;
      yield user("do it");
      await done;
    }
    const q = query({ prompt: input(), options: { ...base, permissionMode: process.env.HL_MODE } });
    if (process.env.HL_SET) {
      try {
        await q.setPermissionMode(process.env.HL_SET);
        seen.set = "ok";
      } catch (e) {
        seen.set = String(e.message || e);
      }
    }
    modeSet();
    await collect(q, async (m) => { if (m.type === "result") finish(); });
  },

  // A prompt generator that ends once the model was asked: the SDK
  // closes stdin while the turn runs (as the Python SDK does for every
  // string prompt); the turn must still answer. The system prompt makes
  // the SDK send an initialize first, as the Python SDK always does.
  async closeEarly() {
    const asked = untilFile(join(process.env.MARKS, "arrived"));
    const options = { ...base, systemPrompt: "You are tiny-go under test." };
    await collect(query({ prompt: prompts([user("hello")], asked), options }));
  },
};

try {
  await scenarios[scenario]();
} catch (e) {
  seen.error = String(e.stack || e);
}
process.stdout.write(JSON.stringify(seen));
