// A client built on the official ACP TypeScript SDK that drives
// `tiny-go acp` through one scenario and prints what it saw as one JSON
// object on stdout; the Go test (client_sdk_test.go) asserts on it and on
// the session file. Usage: node client.mjs SCENARIO (the agent command is
// $ACP_AGENT with $ACP_AGENT_ARGS, JSON; the working directory $ACP_CWD).
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } from "@agentclientprotocol/sdk";

const scenario = process.argv[2];
const cwd = process.env.ACP_CWD;
const agentProc = spawn(process.env.ACP_AGENT, JSON.parse(process.env.ACP_AGENT_ARGS || "[]"), {
  cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => agentProc.on("exit", (code, signal) => resolve({ code, signal })));

const seen = { updates: [], permissions: [], scenario };
let permissionAnswer = "allow_once";
const waiters = [];
function notify() {
  for (const w of [...waiters]) {
    if (w.test()) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  }
}
function until(test, what, ms = 30000) {
  if (test()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out waiting for " + what)), ms);
    waiters.push({ test, resolve: () => { clearTimeout(timer); resolve(); } });
  });
}
async function untilFile(path, ms = 30000) {
  const end = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > end) throw new Error("timed out waiting for " + path);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const app = client()
  .onNotification(methods.client.session.update, (cx) => {
    seen.updates.push(cx.params.update);
    notify();
  })
  .onRequest(methods.client.fs.readTextFile, (cx) => {
    seen.reads = (seen.reads || []).concat([cx.params.path]);
    return { content: "unsaved buffer of " + cx.params.path + "\nsecond line\n" };
  })
  .onRequest(methods.client.fs.writeTextFile, (cx) => {
    seen.writes = (seen.writes || []).concat([{ path: cx.params.path, content: cx.params.content }]);
    return {};
  })
  .onRequest(methods.client.session.requestPermission, (cx) => {
    seen.permissions.push({ toolCall: cx.params.toolCall, options: cx.params.options.map((o) => o.kind), names: cx.params.options.map((o) => o.name) });
    notify();
    // ACP_OPTION picks an option by its id ("cancel": the question is cancelled).
    if (process.env.ACP_OPTION === "cancel") return { outcome: { outcome: "cancelled" } };
    const option = process.env.ACP_OPTION
      ? cx.params.options.find((o) => o.optionId === process.env.ACP_OPTION)
      : cx.params.options.find((o) => o.kind === permissionAnswer);
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  })
  .onRequest(methods.client.elicitation.create, (cx) => {
    // The form as the client got it (the SDK has checked it against the
    // schema), answered with $ACP_ELICIT_ANSWER.
    seen.elicitations = (seen.elicitations || []).concat([cx.params]);
    // Without an answer: a client that announced forms but has no handler.
    if (!process.env.ACP_ELICIT_ANSWER) throw RequestError.methodNotFound(methods.client.elicitation.create);
    return JSON.parse(process.env.ACP_ELICIT_ANSWER);
  });

const conn = app.connect(ndJsonStream(Writable.toWeb(agentProc.stdin), Readable.toWeb(agentProc.stdout)));
const agent = conn.agent;
const text = (t) => [{ type: "text", text: t }];

async function main() {
  const init = await agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: {
      fs: { readTextFile: scenario === "fs", writeTextFile: scenario === "fs" },
      terminal: false,
      ...(scenario === "elicit" ? { elicitation: { form: {} } } : {}),
    },
  });
  seen.initialize = init;

  switch (scenario) {
    case "permission": {
      const { sessionId, modes } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
      seen.sessionId = sessionId;
      seen.modes = modes;
      // The first call is allowed once, the second rejected.
      const prompt = agent.request(methods.agent.session.prompt, { sessionId, prompt: text("make notes") });
      await until(() => seen.permissions.length === 1, "the first permission request");
      permissionAnswer = "reject_once";
      seen.prompt = await prompt;
      break;
    }
    case "modes": {
      // Every mode is offered; in edits an edit inside runs unasked; in
      // review a command runs first and its changes are asked about:
      // the first applied, the second rejected.
      const { sessionId, modes } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
      seen.sessionId = sessionId;
      seen.modes = modes;
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "edits" });
      seen.editsPrompt = await agent.request(methods.agent.session.prompt, { sessionId, prompt: text("write it") });
      seen.editsPermissions = seen.permissions.length;
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "review" });
      const prompt = agent.request(methods.agent.session.prompt, { sessionId, prompt: text("run them") });
      await until(() => seen.permissions.length === 1, "the first review");
      permissionAnswer = "reject_once";
      seen.prompt = await prompt;
      break;
    }
    case "fs": {
      const { sessionId } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
      seen.sessionId = sessionId;
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
      seen.prompt = await agent.request(methods.agent.session.prompt, { sessionId, prompt: text("edit the draft") });
      break;
    }
    case "cancel": {
      const { sessionId } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
      seen.sessionId = sessionId;
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
      const prompt = agent.request(methods.agent.session.prompt, { sessionId, prompt: text("deploy") });
      await untilFile(process.env.ACP_PID || join(cwd, "pid"));
      await agent.notify(methods.agent.session.cancel, { sessionId });
      seen.prompt = await prompt;
      break;
    }
    case "load": {
      const sessionId = process.env.ACP_SESSION;
      seen.load = await agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
      seen.sessionId = sessionId;
      // The session goes on after the load.
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
      seen.replayed = seen.updates.length;
      seen.prompt = await agent.request(methods.agent.session.prompt, { sessionId, prompt: text("and now?") });
      break;
    }
    case "disconnect": {
      const { sessionId } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
      seen.sessionId = sessionId;
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
      agent.request(methods.agent.session.prompt, { sessionId, prompt: text("deploy") }).catch(() => {});
      await untilFile(process.env.ACP_PID || join(cwd, "pid"));
      // The editor goes away mid-command: its end of the pipes closes.
      agentProc.stdin.end();
      agentProc.stdout.destroy();
      const timer = setTimeout(() => agentProc.kill("SIGKILL"), 30000);
      seen.exit = await exited;
      clearTimeout(timer);
      break;
    }
    case "agents": {
      // Plan mode, then the todo list and a subagent, then the listing.
      const { sessionId, modes } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
      seen.sessionId = sessionId;
      seen.modes = modes;
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "plan" });
      seen.planPrompt = await agent.request(methods.agent.session.prompt, { sessionId, prompt: text("plan it") });
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
      seen.prompt = await agent.request(methods.agent.session.prompt, { sessionId, prompt: text("delegate") });
      seen.list = await agent.request(methods.agent.session.list, { cwd });
      break;
    }
    case "cancel-child": {
      // session/cancel while a subagent runs a command.
      const { sessionId } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
      seen.sessionId = sessionId;
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
      const prompt = agent.request(methods.agent.session.prompt, { sessionId, prompt: text("deploy it") });
      await untilFile(process.env.ACP_PID || join(cwd, "pid"));
      await agent.notify(methods.agent.session.cancel, { sessionId });
      seen.prompt = await prompt;
      break;
    }
    case "elicit":
    case "elicit-permission": {
      // An MCP server of the catalog ($ACP_MCP) asks for a form mid-call:
      // with the capability announced as elicitation/create, else as a
      // permission request.
      const { sessionId } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [
        { type: "http", name: "ts", url: process.env.ACP_MCP, headers: [] },
      ] });
      seen.sessionId = sessionId;
      await agent.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
      seen.prompt = await agent.request(methods.agent.session.prompt, { sessionId, prompt: text("set it up") });
      break;
    }
    case "sessions": {
      // An editor going through many sessions: it lists them, loads each
      // (every tenth gets a prompt), closes three of four and leaves the
      // fourth open. The agent's mappings of session files (its
      // /proc/PID/maps) are counted at the start, after every 50
      // sessions, and after a last listing.
      const maps = () => readFileSync(`/proc/${agentProc.pid}/maps`, "utf8").split("\n").filter((l) => l.includes("/.tiny-agent/sessions/")).length;
      const { sessions } = await agent.request(methods.agent.session.list, { cwd });
      seen.listed = sessions.length;
      seen.maps = [maps()];
      seen.stopReasons = [];
      seen.loaded = 0;
      for (const [i, s] of sessions.entries()) {
        const sessionId = s.sessionId;
        await agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
        seen.loaded++;
        if (i % 10 === 0) {
          const { stopReason } = await agent.request(methods.agent.session.prompt, { sessionId, prompt: text("and now?") });
          seen.stopReasons.push(stopReason);
        }
        if (i % 4 !== 3) await agent.request(methods.agent.session.close, { sessionId });
        if ((i + 1) % 50 === 0) seen.maps.push(maps());
      }
      await agent.request(methods.agent.session.list, { cwd });
      seen.maps.push(maps());
      // The replays are many; their count is enough here.
      seen.replayed = seen.updates.length;
      seen.updates = [];
      break;
    }
    default:
      throw new Error("unknown scenario " + scenario);
  }
}

try {
  await main();
} catch (err) {
  seen.error = String(err && err.stack ? err.stack : err) + (err && err.data ? " " + JSON.stringify(err.data) : "");
}
if (scenario !== "disconnect") {
  agentProc.stdin.end();
  const timer = setTimeout(() => agentProc.kill("SIGKILL"), 30000);
  seen.exit = await exited;
  clearTimeout(timer);
}
process.stdout.write(JSON.stringify(seen) + "\n");
process.exit(0);
