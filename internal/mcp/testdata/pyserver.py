"""A minimal MCP server over stdio without any SDK, for the tests.

It speaks only the older protocol: server/discover gets "method not found".
The first argument picks a misbehaviour: "normal", "silent" (never answers
anything), "silent-initialize" (answers server/discover, never initialize),
"garbage" (writes a line that is not JSON-RPC to stdout), "spawn" (starts a
long sleep in its process group, its pid in $MCP_TEST_DIR/child.pid).
"""
import json
import os
import subprocess
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
d = os.environ.get("MCP_TEST_DIR")


def host_pid():
    """The pid as tiny-go's side sees it: /proc is the host's, while
    os.getpid() answers in the server's own PID namespace."""
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return os.getpid()


if d:
    with open(os.path.join(d, "server.pid"), "w") as f:
        f.write(str(host_pid()))
sys.stderr.write("pyserver: starting in mode %s\n" % mode)
sys.stderr.flush()

TOOLS = [
    {"name": "echo", "description": "echoes its text",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "crash", "description": "exits in the middle of the call",
     "inputSchema": {"type": "object"}},
    {"name": "env", "description": "returns its environment",
     "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "answers with a JSON-RPC error",
     "inputSchema": {"type": "object"}},
    {"name": "touch", "description": "creates the file at path",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


if mode == "spawn":
    child = subprocess.Popen(["sleep", "300"])
    pid = child.pid
    if pid != host_pid() and host_pid() != os.getpid():
        # In a PID namespace: the host pid of the only child.
        with open("/proc/thread-self/children") as c:
            pid = int(c.read().split()[0])
    with open(os.path.join(d, "child.pid"), "w") as f:
        f.write(str(pid))

if mode == "garbage":
    sys.stdout.write("Hello! I am not an MCP server.\n")
    sys.stdout.flush()

for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None or mode == "silent":
        continue
    if method == "server/discover":
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
    elif method == "initialize":
        if mode == "silent-initialize":
            continue
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "pyserver", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name, args = msg["params"]["name"], msg["params"].get("arguments") or {}
        if name == "fail":
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32603, "message": "deliberate failure"}})
            continue
        if name == "crash":
            sys.stderr.write("pyserver: crashing\n")
            sys.stderr.flush()
            os._exit(3)
        text = "py: " + args.get("text", "")
        if name == "touch":
            try:
                open(args["path"], "w").close()
                text = "created"
            except OSError as e:
                text = "refused: " + e.strerror
        if name == "env":
            text = "\n".join(k + "=" + v for k, v in sorted(os.environ.items()))
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
