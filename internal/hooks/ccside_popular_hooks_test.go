package hooks_test

// Eight hook scripts of our own, each doing what a well-known public
// hook does (named above each one), for TestPopularHooksSideBySide.
// They are short on purpose: the behaviour is what counts, not the
// originals' breadth of patterns.

// bashValidator is a PreToolUse Bash guard in the manner of
// anthropics/claude-code's examples/hooks/bash_command_validator_example.py
// (grep → suggest rg) and disler/claude-code-hooks-mastery's
// pre_tool_use.py (any rm -rf is refused): exit 2, the reason on stderr.
const bashValidator = `import json, re, sys
inp = json.load(sys.stdin)
if inp.get("tool_name") != "Bash":
    sys.exit(0)
cmd = (inp.get("tool_input") or {}).get("command", "")
problems = []
if re.search(r"^grep\b(?!.*\|)", cmd):
    problems.append("Use 'rg' (ripgrep) instead of 'grep'.")
if re.search(r"\brm\s+(-[a-zA-Z]*r[a-zA-Z]*f|-[a-zA-Z]*f[a-zA-Z]*r)\b", cmd):
    problems.append("BLOCKED: rm -rf is not allowed here.")
if problems:
    for p in problems:
        print("- " + p, file=sys.stderr)
    sys.exit(2)
`

// secretGuard keeps .env files from Read, Edit and Write with a JSON deny,
// as karanb192/claude-code-hooks' protect-secrets does (templates such as
// .env.example stay allowed).
const secretGuard = `import json, os, sys
inp = json.load(sys.stdin)
path = (inp.get("tool_input") or {}).get("file_path", "")
name = os.path.basename(path)
if name == ".env" or (name.startswith(".env.") and name not in (".env.example", ".env.sample")):
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "Cannot touch " + name + ": it holds secrets."}}))
`

// toolLogger appends every PostToolUse input to logs/post_tool_use.json,
// a JSON list, as disler's post_tool_use.py does.
const toolLogger = `import json, os, sys
inp = json.load(sys.stdin)
d = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "logs")
os.makedirs(d, exist_ok=True)
p = os.path.join(d, inp["hook_event_name"] + ".json")
log = json.load(open(p)) if os.path.exists(p) else []
log.append(inp)
json.dump(log, open(p, "w"), indent=2)
`

// formatter formats the file a Write or Edit touched, as
// karanb192/claude-code-hooks' format-code does with a real formatter:
// here trailing blanks go and the file ends with one newline.
const formatter = `import json, sys
inp = json.load(sys.stdin)
if inp.get("tool_name") not in ("Write", "Edit"):
    sys.exit(0)
p = (inp.get("tool_input") or {}).get("file_path")
if not p or not p.endswith(".py"):
    sys.exit(0)
lines = [l.rstrip() for l in open(p).read().split("\n")]
while lines and lines[-1] == "":
    lines.pop()
open(p, "w").write("\n".join(lines) + "\n")
`

// promptGuard refuses a prompt that holds an API key, and otherwise adds
// context to it, as disler's user_prompt_submit.py (validation) and the
// additionalContext examples of Claude Code's hook docs do.
const promptGuard = `import json, re, sys
inp = json.load(sys.stdin)
if re.search(r"sk-ant-[A-Za-z0-9-]{10,}", inp.get("prompt", "")):
    print(json.dumps({"decision": "block", "reason": "Prompt blocked: it holds an API key."}))
    sys.exit(0)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
    "additionalContext": "Prompt context: the team prefers small diffs."}}))
`

// sessionContext loads project notes at session start, as disler's
// session_start.py --load-context and anthropics/claude-code's
// explanatory-output-style plugin do.
const sessionContext = `import json, os, sys
inp = json.load(sys.stdin)
notes = open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], ".claude", "NOTES.md")).read().strip()
print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
    "additionalContext": "Session " + inp.get("source", "") + ". Project notes: " + notes}}))
`

// compactBackup copies the transcript before a compaction, as disler's
// pre_compact.py --backup does.
const compactBackup = `import json, os, shutil, sys
inp = json.load(sys.stdin)
d = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "logs", "transcript_backups")
os.makedirs(d, exist_ok=True)
stem = os.path.splitext(os.path.basename(inp["transcript_path"]))[0]
shutil.copy(inp["transcript_path"], os.path.join(d, stem + "_pre_compact_" + inp["trigger"] + ".jsonl"))
`
