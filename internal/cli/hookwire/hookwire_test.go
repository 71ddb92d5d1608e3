package hookwire

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// Without a configured hook the agent must get an untyped nil, or it
// would run the hook path for every call.
func TestNoHooksGivesTheAgentNone(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	h, err := New(Options{Getenv: env(map[string]string{"HOME": home}), Cwd: cwd, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if h.Runner() != nil || h.Agent() != nil {
		t.Fatalf("no hooks configured, got runner %v agent %v", h.Runner(), h.Agent())
	}
	if r, err := h.Child("id", "path", "general"); r != nil || err != nil {
		t.Fatalf("Child without hooks = %v, %v", r, err)
	}
	h.Ended("other") // must not panic without a runner
}

func TestConfiguredHookMakesARunner(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	dir := filepath.Join(cwd, ".claude")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"true"}]}]}}`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Getenv: env(map[string]string{"HOME": home}), Cwd: cwd, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if h.Runner() == nil || h.Agent() == nil {
		t.Fatal("a PreToolUse hook in .claude/settings.json made no runner")
	}
}

func TestBadNotifySettingIsAUsageError(t *testing.T) {
	for name, value := range map[string]string{
		config.EnvVar(config.Notify):         "loud",
		config.EnvVar(config.NotifyAfter):    "-3s",
		config.EnvVar(config.HookFailClosed): "maybe",
	} {
		_, err := New(Options{Getenv: env(map[string]string{"HOME": t.TempDir(), name: value}), Cwd: t.TempDir(), Stderr: io.Discard, Callbacks: true})
		var usage cmdutil.UsageError
		if !errors.As(err, &usage) {
			t.Errorf("%s=%s: got %v, want a usage error", name, value, err)
		}
	}
}

func TestManualCompactIsTheTriggerUntilDone(t *testing.T) {
	h := &Hooks{}
	done := h.ManualCompact("keep the API notes")
	if h.trigger() != "manual" || h.customInstructions() != "keep the API notes" {
		t.Fatalf("during /compact: trigger %q instructions %q", h.trigger(), h.customInstructions())
	}
	done()
	if h.trigger() != "auto" || h.customInstructions() != "" {
		t.Fatalf("after /compact: trigger %q instructions %q", h.trigger(), h.customInstructions())
	}
}

func TestClaudePermissionModeNames(t *testing.T) {
	want := map[approval.Mode]string{approval.Auto: "bypassPermissions", approval.Edits: "acceptEdits", approval.Plan: "plan", approval.Ask: "default"}
	for m, name := range want {
		if got := ClaudePermissionMode(m); got != name {
			t.Errorf("%v: %q, want %q", m, got, name)
		}
	}
}
