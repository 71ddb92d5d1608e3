package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// systemMessage is the request's system message.
func systemMessage(t *testing.T, r providertest.Request) string {
	t.Helper()
	for _, m := range r.Chat.Messages {
		if m.Role == "system" && m.Content != nil {
			return *m.Content
		}
	}
	t.Fatal("no system message")
	return ""
}

// A Claude Code project's instruction files reach the model, in Claude
// Code's order, each once: ~/.claude/CLAUDE.md, then CLAUDE.md, AGENTS.md
// and CLAUDE.local.md from the repository root down to the working
// directory, then .claude/rules; @path imports follow their file (a
// cycle and a reference inside code are not followed, depth is bounded).
// They are still there after /compact, and `tiny-go config` and /status
// name them with their sizes.
func TestInstructionFiles(t *testing.T) {
	h := newHookRun(t, "",
		providertest.Reply{Text: "First."},
		providertest.Reply{Text: "Second."},
		providertest.Reply{Text: "Third."},
		providertest.Reply{Text: "Third and a half."},
		providertest.Reply{Text: "Summary of the talk."},
		providertest.Reply{Text: "Fourth."},
	)
	root := h.dir
	h.dir = filepath.Join(root, "app")
	files := map[string]string{
		filepath.Join(h.home, ".claude", "CLAUDE.md"):           "USER-MEMORY\n",
		filepath.Join(root, ".git", "HEAD"):                     "ref: refs/heads/main\n",
		filepath.Join(root, "CLAUDE.md"):                        "ROOT-CLAUDE see @docs/style.md and `@docs/not-this.md`\n",
		filepath.Join(root, "docs", "style.md"):                 "STYLE-GUIDE, also @./more.md\n",
		filepath.Join(root, "docs", "more.md"):                  "MORE-STYLE back to @style.md\n",
		filepath.Join(root, "docs", "not-this.md"):              "CODE-SPAN-IMPORT\n",
		filepath.Join(root, "app", "AGENTS.md"):                 "APP-AGENTS\n```\n@../docs/fenced.md\n```\nmail me at a@b.example\n",
		filepath.Join(root, "docs", "fenced.md"):                "FENCED-IMPORT\n",
		filepath.Join(root, "app", "CLAUDE.local.md"):           "APP-LOCAL\n",
		filepath.Join(root, "app", ".claude", "rules", "go.md"): "RULE-GO\n",
		filepath.Join(root, "outside", "CLAUDE.md"):             "SIBLING-NOT-READ\n",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := h.main("one\ntwo\nthree\nthree and a half\n/compact\nfour\n/status\n/exit\n")
	if code != 0 || !strings.Contains(stdout, "Fourth.") || strings.Contains(stdout, "Nothing to compact") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	reqs := h.srv.Requests()
	if b := string(reqs[len(reqs)-1].Body); !strings.Contains(b, "Summary of the talk.") || strings.Contains(b, `"one"`) {
		t.Fatalf("the last request is not after the compaction: %s", b)
	}
	want := []string{"USER-MEMORY", "ROOT-CLAUDE", "STYLE-GUIDE", "MORE-STYLE", "APP-AGENTS", "APP-LOCAL", "RULE-GO"}
	for _, i := range []int{0, len(reqs) - 1} {
		sys := systemMessage(t, reqs[i])
		last := -1
		for _, w := range want {
			at := strings.Index(sys, w)
			if at < 0 || at < last {
				t.Errorf("request %d: %s missing or out of order:\n%s", i, w, sys)
			}
			last = at
		}
		for _, no := range []string{"CODE-SPAN-IMPORT", "FENCED-IMPORT", "SIBLING-NOT-READ"} {
			if strings.Contains(sys, no) {
				t.Errorf("request %d: %s should not be there", i, no)
			}
		}
		if n := strings.Count(sys, "STYLE-GUIDE"); n != 1 {
			t.Errorf("request %d: style.md %d times (an import cycle)", i, n)
		}
		if !strings.Contains(sys, `<project_instructions path="`+filepath.Join(root, "docs", "style.md")+`">`) {
			t.Errorf("request %d: the import is not its own project_instructions", i)
		}
	}
	if !strings.Contains(stdout, "instructions: "+filepath.Join(h.home, ".claude", "CLAUDE.md")+" (12 bytes)") {
		t.Errorf("/status does not list the files with sizes:\n%s", stdout)
	}
	code, stdout, _ = h.main("", "config")
	if code != 0 || !strings.Contains(stdout, filepath.Join(root, "app", "CLAUDE.local.md")) || !strings.Contains(stdout, "INSTRUCTIONS") {
		t.Errorf("config does not list the instruction files:\n%s", stdout)
	}
}
