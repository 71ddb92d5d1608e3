package responses

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// want is what a fixture stream must decode to.
type want struct {
	finish, detail, text string
	calls                []provider.ToolCall
	keptTypes            []string // the types of the kept items, in order
	usage                provider.Usage
	errKind              string
	retryable            bool
	errHas               string
}

var fixtures = map[string]want{
	"text.sse": {finish: provider.FinishStop, text: "Hello, wörld.",
		usage: provider.Usage{Input: 176, CacheRead: 1024, Output: 40, PromptTokens: 1200}},
	"reasoning_function_call.sse": {finish: provider.FinishToolUse,
		calls:     []provider.ToolCall{{ID: "call_A1", Name: "read", Arguments: `{"path":"go.mod"}`}},
		keptTypes: []string{"reasoning", "function_call"},
		usage:     provider.Usage{Input: 500, Output: 120, PromptTokens: 500, Reasoning: 64}},
	"apply_patch.sse": {finish: provider.FinishToolUse,
		calls: []provider.ToolCall{
			{ID: "call_P1", Name: "write", Arguments: `{"path":"hello.txt","content":"hello\nworld\n"}`},
			{ID: "call_P2", Name: "edit", Arguments: `{"path":"main.go","edits":[{"oldText":"\tx := 1\n\tprintln(x)\n}\n","newText":"\tx := 1\n\tfmt.Println(x)\n}\n"}]}`},
			{ID: "call_P3", Name: "bash", Arguments: `{"command":"rm -f -- 'old file.txt'"}`},
		},
		keptTypes: []string{"apply_patch_call", "apply_patch_call", "apply_patch_call"},
		usage:     provider.Usage{Input: 288, CacheRead: 512, Output: 90, PromptTokens: 800}},
	"shell.sse": {finish: provider.FinishToolUse,
		calls: []provider.ToolCall{
			{ID: "call_S1", Name: "bash", Arguments: `{"command":"ls -la\ngit status","timeout":120}`},
			{ID: "call_L1", Name: "bash", Arguments: `{"command":"cd 'sub dir' && echo hi","timeout":5}`},
		},
		keptTypes: []string{"shell_call", "local_shell_call"},
		usage:     provider.Usage{Input: 100, Output: 20, PromptTokens: 100}},
	"incomplete_call.sse": {finish: provider.FinishLength,
		calls:     []provider.ToolCall{{ID: "call_C7", Name: "write", Arguments: `{"path":"a.txt","content":"aaaa`}},
		keptTypes: []string{"function_call"},
		usage:     provider.Usage{Input: 900, Output: 4096, PromptTokens: 900, Reasoning: 3000}},
	"content_filter.sse": {finish: provider.FinishRefusal, detail: "content_filter", text: "Here is how",
		keptTypes: []string{"message"}, usage: provider.Usage{Input: 50, Output: 3, PromptTokens: 50}},
	"refusal.sse": {finish: provider.FinishRefusal, detail: "refusal", text: "I can't help with that.",
		keptTypes: []string{"message"}, usage: provider.Usage{Input: 20, Output: 8, PromptTokens: 20}},
	"text_minimal.sse": {finish: provider.FinishStop, text: "Short answer.",
		usage: provider.Usage{Input: 12, Output: 3, PromptTokens: 12}},
	"whole_output.sse": {finish: provider.FinishToolUse, text: "Given whole.",
		calls:     []provider.ToolCall{{ID: "call_W", Name: "read", Arguments: `{"path":"x"}`}},
		keptTypes: []string{"message", "function_call"},
		usage:     provider.Usage{Input: 12, Output: 3, PromptTokens: 12}},
	"item_without_done.sse": {finish: provider.FinishToolUse,
		calls:     []provider.ToolCall{{ID: "call_D", Name: "bash", Arguments: `{"command":"rm -f -- gone.txt"}`}},
		keptTypes: []string{"apply_patch_call"},
		usage:     provider.Usage{Input: 5, Output: 2, PromptTokens: 5}},
	"error_quota.sse":      {errKind: provider.KindQuota, errHas: "(insufficient_quota): You exceeded your current quota"},
	"error_rate_limit.sse": {errKind: provider.KindRateLimited, retryable: true, errHas: "Rate limit reached"},
	"failed.sse": {errKind: provider.KindProviderError, errHas: "(server_error): The model failed",
		usage: provider.Usage{Input: 300, Output: 7, PromptTokens: 300}},
}

// Every fixture decodes to the same reply however the stream is split:
// at every byte, as two reads.
func TestFixturesSplitAtEveryByte(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, f := range files {
		if _, ok := fixtures[filepath.Base(f)]; !ok {
			t.Errorf("%s has no expected reply", f)
		}
	}
	for name, w := range fixtures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i <= len(data); i++ {
				var shown strings.Builder
				r := io.MultiReader(bytes.NewReader(data[:i]), bytes.NewReader(data[i:]))
				resp, err := readStream(r, "", func(d provider.Delta) { shown.WriteString(d.Content) })
				if msg := check(w, resp, err, shown.String()); msg != "" {
					t.Fatalf("split at %d: %s", i, msg)
				}
			}
		})
	}
}

func check(w want, resp provider.Response, err error, shown string) string {
	if w.errKind != "" {
		var pe *provider.Error
		switch {
		case !errors.As(err, &pe):
			return "want an *Error, got " + errString(err)
		case pe.Kind != w.errKind || pe.Retryable != w.retryable || !strings.Contains(pe.Message, w.errHas):
			return "error " + pe.Kind + ": " + pe.Message
		case w.usage != (provider.Usage{}) && (pe.Usage == nil || stripCost(*pe.Usage) != w.usage):
			return "the failed reply's usage was lost"
		}
		return ""
	}
	if err != nil {
		return "error: " + err.Error()
	}
	text := ""
	if resp.Content != nil {
		text = *resp.Content
	}
	var kept []string
	for _, it := range keptItems(resp.ReasoningDetails) {
		var head Item
		_ = jsonUnmarshal(it, &head)
		kept = append(kept, head.Type)
	}
	if len(w.keptTypes) > 0 && !w.hasKeep() {
		kept = nil
	}
	switch {
	case resp.FinishReason != w.finish || resp.StopDetail != w.detail:
		return "finish " + resp.FinishReason + "/" + resp.StopDetail
	case text != w.text || shown != w.text:
		return "text " + text + " shown " + shown
	case !reflect.DeepEqual(resp.ToolCalls, w.calls):
		return "calls differ"
	case w.hasKeep() && !reflect.DeepEqual(kept, w.keptTypes):
		return "kept " + strings.Join(kept, ",")
	case !w.hasKeep() && resp.ReasoningDetails != nil:
		return "kept items for a reply without reasoning or native calls"
	case stripCost(resp.Usage) != w.usage:
		return "usage differs"
	}
	return ""
}

// hasKeep reports replies whose items must be kept: reasoning or native.
func (w want) hasKeep() bool {
	for _, t := range w.keptTypes {
		if t == "reasoning" || isNative(t) {
			return true
		}
	}
	return false
}

func stripCost(u provider.Usage) provider.Usage { u.Cost = nil; return u }

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
