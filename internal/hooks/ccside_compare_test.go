package hooks_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The calls of the scenario, by tool_use_id (steps in ccside_model_test.go).
const (
	idBash, idWrite, idEdit, idRead  = "toolu_00", "toolu_01", "toolu_02", "toolu_03"
	idBlock, idDeny, idCtx, idFeed   = "toolu_04", "toolu_05", "toolu_06", "toolu_07"
	idRewrite, idFail, idAgent       = "toolu_08", "toolu_09", "toolu_10"
	subagentName, subagentNameInTiny = "Agent", "Task"
)

// minCCMatches: at least this many of the checks match (the issue asks
// for 52; 56 do, one row of slack for a Claude Code release that moves).
const minCCMatches = 55

func ccChecks() []check {
	pre := func(id string, path ...string) func(r *sideRun) any {
		return func(r *sideRun) any { return field(r.byID("PreToolUse", id), path...) }
	}
	post := func(id string, path ...string) func(r *sideRun) any {
		return func(r *sideRun) any { return field(r.byID("PostToolUse", id), path...) }
	}
	postKeys := func(id string) func(r *sideRun) any {
		return func(r *sideRun) any { return keys(field(r.byID("PostToolUse", id), "tool_response")) }
	}
	env := func(event, name string) func(r *sideRun) any {
		return func(r *sideRun) any {
			if hs := r.of(event); len(hs) > 0 {
				return hs[0].Env[name] != ""
			}
			return nil
		}
	}
	return []check{
		{"hook_event_name is the event, every hook", func(r *sideRun) any {
			for _, h := range r.Hooks {
				if ev, _, _ := strings.Cut(h.Event, "-"); h.In["hook_event_name"] != ev {
					return false
				}
			}
			return true
		}},
		{"session_id is a UUID, the same in every hook of the main session", func(r *sideRun) any {
			id, _ := r.first("SessionStart")["session_id"].(string)
			for _, h := range r.Hooks {
				if h.Event != "SubagentStop" && h.In["session_id"] != id {
					return false
				}
			}
			return uuidForm.MatchString(id)
		}},
		{"cwd", func(r *sideRun) any { return r.first("PreToolUse")["cwd"] }},
		{"permission_mode (-p --dangerously-skip-permissions)", func(r *sideRun) any { return r.first("PreToolUse")["permission_mode"] }},
		{"transcript_path names a .jsonl file that exists", func(r *sideRun) any {
			// Claude Code writes its transcript a little after the first
			// call's PreToolUse; its PostToolUse finds it.
			h := r.recByID("PostToolUse", idBash)
			p, _ := h.In["transcript_path"].(string)
			return h.Transcript != nil && strings.HasSuffix(p, ".jsonl")
		}},
		{"transcript lines: {type, message{role, content}, uuid, parentUuid, sessionId, timestamp, cwd}", func(r *sideRun) any {
			h := r.recByID("PostToolUse", idAgent)
			return wellFormed(transcriptLines(h.Transcript), h.In["session_id"])
		}},
		{"transcript holds the prompt at the first call's PostToolUse", func(r *sideRun) any {
			return holds(transcriptLines(r.recByID("PostToolUse", idBash).Transcript), "user", "text", "text", "Go through the steps")
		}},
		// Claude Code writes its transcript asynchronously: at a call's
		// PostToolUse, or at the Stop after a blocked one, what just
		// happened is there in some runs only (tiny-go's is always up to
		// date when a hook runs). These two read the copy SessionEnd's hook
		// took, when both have surely written it.
		{"transcript holds the call (tool_use) by the session's end", func(r *sideRun) any {
			return holds(transcriptLines(r.lastCopy()), "assistant", "tool_use", "id", idWrite)
		}},
		{"transcript holds the answer a Stop hook blocked, by the session's end", func(r *sideRun) any {
			return holds(transcriptLines(r.lastCopy()), "assistant", "text", "text", "all done")
		}},
		{"UserPromptSubmit prompt", func(r *sideRun) any { return r.first("UserPromptSubmit")["prompt"] }},
		{"SessionStart source at start", func(r *sideRun) any { return r.first("SessionStart")["source"] }},
		{"PreToolUse Bash tool_name", pre(idBash, "tool_name")},
		{"PreToolUse Bash tool_input", pre(idBash, "tool_input")},
		{"PreToolUse Write tool_input", pre(idWrite, "tool_input")},
		{"PreToolUse Edit tool_input", pre(idEdit, "tool_input")},
		{"PreToolUse Read tool_input", pre(idRead, "tool_input")},
		{"PreToolUse tool_use_id is the model's id", pre(idRead, "tool_use_id")},
		{"PreToolUse subagent tool_name", pre(idAgent, "tool_name")},
		{"PreToolUse subagent tool_input keys", func(r *sideRun) any {
			k := keys(field(r.byID("PreToolUse", idAgent), "tool_input"))
			return strings.Join(k, ",")
		}},
		{"PostToolUse Bash tool_response keys", postKeys(idBash)},
		{"PostToolUse Bash stdout", post(idBash, "tool_response", "stdout")},
		{"PostToolUse Write tool_response keys", postKeys(idWrite)},
		{"PostToolUse Edit tool_response keys", postKeys(idEdit)},
		{"PostToolUse Edit structuredPatch", post(idEdit, "tool_response", "structuredPatch")},
		{"PostToolUse Read tool_response", post(idRead, "tool_response")},
		{"PostToolUse subagent tool_response content", post(idAgent, "tool_response", "content")},
		{"PostToolUse duration_ms is a number", func(r *sideRun) any {
			_, ok := field(r.byID("PostToolUse", idBash), "duration_ms").(float64)
			return ok
		}},
		{"prompt_id on tool events", func(r *sideRun) any {
			_, ok := field(r.byID("PreToolUse", idBash), "prompt_id").(string)
			return ok
		}},
		{"PostToolUseFailure error", func(r *sideRun) any { return field(r.byID("PostToolUseFailure", idFail), "error") }},
		{"PostToolUseFailure is_interrupt", func(r *sideRun) any { return field(r.byID("PostToolUseFailure", idFail), "is_interrupt") }},
		{"Stop stop_hook_active and last_assistant_message, first then after a block", func(r *sideRun) any {
			return []any{stopSeq(r, "stop_hook_active"), stopSeq(r, "last_assistant_message")}
		}},
		{"SubagentStop last_assistant_message and stop_hook_active", func(r *sideRun) any {
			m := r.first("SubagentStop")
			return []any{m["last_assistant_message"], m["stop_hook_active"]}
		}},
		{"SubagentStop agent_id, agent_type, agent_transcript_path", func(r *sideRun) any {
			m := r.first("SubagentStop")
			return m["agent_id"] != nil && m["agent_type"] != nil && m["agent_transcript_path"] != nil
		}},
		{"SessionEnd reason", func(r *sideRun) any { return r.first("SessionEnd")["reason"] }},
		{"SessionStart source on -c", func(r *sideRun) any { return sourceAt(r, 1) }},
		{"PreCompact on -p \"/compact …\": trigger, custom_instructions", func(r *sideRun) any {
			m := r.first("PreCompact")
			return []any{m["trigger"], m["custom_instructions"]}
		}},
		{"PostCompact trigger", func(r *sideRun) any { return r.first("PostCompact")["trigger"] }},
		{"SessionStart source after /compact", func(r *sideRun) any { return sourceAt(r, len(r.of("SessionStart"))-1) }},
		{"no Notification in a -p run that asks nobody", func(r *sideRun) any { return len(r.of("Notification")) }},
		{"env CLAUDE_PROJECT_DIR", func(r *sideRun) any {
			return r.first("PreToolUse") != nil && r.Hooks[0].Env["CLAUDE_PROJECT_DIR"] == r.Dir
		}},
		{"env CLAUDECODE", env("PreToolUse", "CLAUDECODE")},
		{"env CLAUDE_CODE_ENTRYPOINT", env("PreToolUse", "CLAUDE_CODE_ENTRYPOINT")},
		{"env CLAUDE_ENV_FILE in SessionStart", env("SessionStart", "CLAUDE_ENV_FILE")},
		{"exit 2 blocks the call; stderr reaches the model as its result", func(r *sideRun) any {
			t, _ := r.result(idBlock)
			return strings.Contains(t, "blocked by the guard") && !strings.Contains(t, "BLOCKME\n")
		}},
		{"a blocked call gets no PostToolUse", func(r *sideRun) any {
			return r.byID("PostToolUse", idBlock) == nil && r.byID("PostToolUse", idDeny) == nil
		}},
		{"permissionDecision deny blocks; its reason reaches the model", func(r *sideRun) any {
			t, _ := r.result(idDeny)
			return strings.Contains(t, "denied by the guard")
		}},
		{"updatedInput: the rewritten command runs", func(r *sideRun) any {
			t, _ := r.result(idRewrite)
			return strings.Contains(t, "rewritten") && field(r.byID("PostToolUse", idRewrite), "tool_input", "command") == "echo rewritten"
		}},
		{"PostToolUse additionalContext reaches the model", func(r *sideRun) any { return r.sent("post context from the hook") }},
		{"PostToolUse decision block: its reason reaches the model", func(r *sideRun) any { return r.sent("post feedback from the hook") }},
		{"UserPromptSubmit additionalContext reaches the model", func(r *sideRun) any { return r.sent("prompt context from the hook") }},
		{"SessionStart stdout reaches the model", func(r *sideRun) any { return r.sent("start context from the hook") }},
		{"Stop decision block: the run goes on with its reason", func(r *sideRun) any {
			return r.sent("keep going: say really done") && len(r.of("Stop")) >= 2
		}},
		{"-p prints the last answer only", func(r *sideRun) any { return r.Stdout }},
		{"matcher \"*\" fires for every call", func(r *sideRun) any { return len(r.of("PreToolUse")) }},
		{"matcher \"Write|Edit\"", func(r *sideRun) any { return toolNames(r, "PreToolUse-list") }},
		{"matcher \"Rea.*\" (a regular expression)", func(r *sideRun) any { return toolNames(r, "PreToolUse-regex") }},
		{"matcher \"Agent\" fires for the subagent call", func(r *sideRun) any { return len(r.of("PreToolUse-agent")) }},
	}
}

func stopSeq(r *sideRun, key string) []any {
	var out []any
	for _, h := range r.of("Stop") {
		out = append(out, h.In[key])
		if len(out) == 2 {
			break
		}
	}
	return out
}

// sourceAt is the source of the i-th SessionStart.
func sourceAt(r *sideRun, i int) any {
	if hs := r.of("SessionStart"); len(hs) > i {
		return hs[i].In["source"]
	}
	return nil
}

func toolNames(r *sideRun, event string) []any {
	var out []any
	for _, h := range r.of(event) {
		out = append(out, h.In["tool_name"])
	}
	return out
}

// normalize makes values of the two runs comparable: JSON round trip,
// the working directory as $DIR, tiny-go's subagent tool name as Claude
// Code's only where a check is about something else.
func normalize(v any, dir string) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), dir, "$DIR")
}

// TestSideBySideWithClaudeCode runs the scenario through Claude Code and
// tiny-go and compares their hooks field by field. The table it logs is
// the one in docs/hooks.md ("Side by side with Claude Code").
func TestSideBySideWithClaudeCode(t *testing.T) {
	claudeCode(t) // skips with the install command when missing
	cc, tg := runSide(t, "claude"), runSide(t, "tiny")
	if cc.Code != 0 || tg.Code != 0 {
		t.Fatalf("exit codes: Claude Code %d, tiny-go %d", cc.Code, tg.Code)
	}
	checks := ccChecks()
	var table strings.Builder
	matched := 0
	for i, c := range checks {
		a, b := normalize(c.get(cc), cc.Dir), normalize(c.get(tg), tg.Dir)
		mark := "differs"
		if reflect.DeepEqual(a, b) {
			matched++
			mark = "match"
		}
		fmt.Fprintf(&table, "| %d | %s | %s | %s | %s |\n", i+1, strings.ReplaceAll(c.name, "|", "\\|"), cell(a), cell(b), mark)
	}
	t.Logf("side by side with Claude Code: %d of %d match\n| # | field or behaviour | Claude Code | tiny-go | |\n|---|---|---|---|---|\n%s", matched, len(checks), table.String())
	if len(checks) != 57 {
		t.Errorf("%d checks; docs/hooks.md and the issue count 57", len(checks))
	}
	if matched < minCCMatches {
		t.Errorf("%d of %d fields and behaviours match Claude Code; want at least %d", matched, len(checks), minCCMatches)
	}
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 90 {
		s = s[:90] + "…"
	}
	return "`" + s + "`"
}
