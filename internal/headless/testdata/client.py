# A program built on the official Claude Agent SDK for Python that runs
# tiny-go (cli_path) through one scenario and prints what it saw as one
# JSON object on stdout; the Go test (pysdk_test.go) asserts on it, on the
# session file and on the file system. Usage: python3 client.py SCENARIO,
# with the executable in $HL_AGENT, the working directory in $HL_CWD and
# the SDK importable (PYTHONPATH=$TINY_PY_SDK).
import asyncio
import dataclasses
import json
import os
import sys
import traceback

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    create_sdk_mcp_server,
    query,
    tool,
)

scenario = sys.argv[1]
seen = {"scenario": scenario, "messages": [], "stderr": "", "calls": []}


def on_stderr(line):
    seen["stderr"] += line + "\n"


def options(**kw):
    return ClaudeAgentOptions(
        cli_path=os.environ["HL_AGENT"], cwd=os.environ["HL_CWD"], stderr=on_stderr, **kw
    )


def record(m):
    d = dataclasses.asdict(m) if dataclasses.is_dataclass(m) else {"value": repr(m)}
    d["_class"] = type(m).__name__
    seen["messages"].append(d)


async def collect(prompt, **kw):
    async for m in query(prompt=prompt, options=options(**kw)):
        record(m)


async def hello():
    # query("hello") HL_COUNT times in a row, each a new tiny-go.
    for _ in range(int(os.environ.get("HL_COUNT", "1"))):
        await collect("hello")


async def hook():
    # A PreToolUse hook callback that denies Bash.
    async def deny_bash(data, tool_use_id, context):
        seen["calls"].append({"hook": data.get("hook_event_name"), "tool": data.get("tool_name"), "input": data.get("tool_input")})
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no shell today"}}

    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny_bash])]}
    await collect("make a file", hooks=hooks, permission_mode="bypassPermissions")


async def mcp():
    # An in-process SDK MCP server whose tool the model calls.
    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args):
        seen["calls"].append({"tool": "add", "args": args})
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    server = create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])
    await collect("add 2 and 3", mcp_servers={"calc": server}, allowed_tools=["mcp__calc__add"])


async def budget():
    await collect("loop", max_budget_usd=float(os.environ["HL_BUDGET"]), permission_mode="bypassPermissions")


async def resume_unknown():
    await collect("hello", resume=os.environ["HL_SESSION"])


async def refused():
    # Options tiny-go refuses ($HL_OPT: schema or session): the SDK raises.
    if os.environ["HL_OPT"] == "schema":
        opt = {"output_format": {"type": "json_schema", "schema": {"type": "object", "properties": {"n": {"type": "number"}}}}}
    else:
        opt = {"session_id": "01a24b90-0000-7000-8000-0000000000aa"}
    await collect("hello", **opt)


async def fork():
    await collect("second question", resume=os.environ["HL_SESSION"], fork_session=True)


async def mode():
    # One prompt under $HL_MODE; with HL_SET, set_permission_mode(HL_SET)
    # first, and its outcome recorded.
    async with ClaudeSDKClient(options=options(permission_mode=os.environ["HL_MODE"])) as client:
        if os.environ.get("HL_SET"):
            try:
                await client.set_permission_mode(os.environ["HL_SET"])
                seen["set"] = "ok"
            except Exception as e:  # the SDK raises the error response
                seen["set"] = str(e)
        await client.query("do it")
        async for m in client.receive_response():
            record(m)


async def main():
    try:
        await globals()[scenario]()
    except Exception as e:
        seen["thrown"] = f"{type(e).__name__}: {e}"
        seen["trace"] = traceback.format_exc()


asyncio.run(main())
sys.stdout.write(json.dumps(seen, default=repr))
