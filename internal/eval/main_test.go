package eval_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/cli"
	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// childEnv makes the test binary act as tiny-go, so the eval starts the
// program under test as a real process without building it first.
const childEnv = "TINY_EVAL_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(m.Run())
}

// repoRoot is the repository's root folder.
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func evalsDir(t testing.TB) string    { return filepath.Join(repoRoot(t), "evals") }
func recordedDir(t testing.TB) string { return filepath.Join(evalsDir(t), "recorded") }
func task(t testing.TB, name string) eval.Task {
	return eval.Task{Name: name, Dir: filepath.Join(evalsDir(t), name)}
}

// self is how the eval starts tiny-go in these tests: this test binary.
func self(t testing.TB) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}
}

// childEnviron is the tests' environment for the agent processes: this
// test binary acts as tiny-go, and no real endpoint or key leaks in.
func childEnviron(extra ...string) []string {
	env := []string{childEnv + "=1"}
	for _, kv := range os.Environ() {
		switch name, _, _ := cutEq(kv); name {
		case "TINY_ENDPOINT", "OPENROUTER_API_KEY", "TINY_API_KEY", "ANTHROPIC_API_KEY", "TINY_MODEL", "TINY_PROVIDER", "TINY_REASONING",
			"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", childEnv:
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

func cutEq(kv string) (string, string, bool) {
	for i := range len(kv) {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// tokens is a pointer for providertest.Usage fields.
func tokens(n int64) *int64 { return &n }

// usage is a plausible usage object: prompt tokens, of which cached were
// read from the cache, completion tokens and the price.
func usage(prompt, cached, completion int64) *providertest.Usage {
	// OpenRouter reports the price too; these are gpt-5-class prices per
	// million tokens: $1.25 input, $0.125 cached input, $10 output.
	cost := (float64(prompt-cached)*1.25 + float64(cached)*0.125 + float64(completion)*10) / 1e6
	u := &providertest.Usage{PromptTokens: prompt, CompletionTokens: completion, Cost: &cost}
	if cached > 0 {
		u.CachedTokens = tokens(cached)
	}
	return u
}

// call is a tool call with its arguments marshalled from a map, so the
// authored replies read as the model's intent rather than as escaped JSON.
func call(id, name string, args map[string]any) providertest.ToolCall {
	b, err := json.Marshal(args, json.Deterministic(true))
	if err != nil {
		panic(err)
	}
	return providertest.ToolCall{ID: id, Name: name, Arguments: string(b)}
}

func calls(text string, u *providertest.Usage, cs ...providertest.ToolCall) providertest.Reply {
	return providertest.Reply{Text: text, ToolCalls: cs, Usage: u, ChunkSize: 16}
}

func answer(text string, u *providertest.Usage) providertest.Reply {
	return providertest.Reply{Text: text, Usage: u, ChunkSize: 16}
}
