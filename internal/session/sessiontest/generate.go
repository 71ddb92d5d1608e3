package sessiontest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Options shape a generated session.
type Options struct {
	// Facts is the minimum number of facts; generation stops after the
	// run that reaches it, so the session ends idle.
	Facts int
	// Seed makes the contents deterministic.
	Seed uint64
	// MaxToolCalls bounds the calls of one reply (default 3).
	MaxToolCalls int
	// CompactEvery compacts after every n runs; 0 never compacts.
	CompactEvery int
	// ResultBytes is the typical size of a tool result (default 600).
	ResultBytes int
	// Code makes the text look like code and command output: lines,
	// tab indents and quoted words, which JSON escapes (so a reader
	// must unescape most strings instead of taking their bytes).
	Code bool
}

// Generate returns a realistic session file: runs of a prompt, a few model
// steps whose replies call tools (read, bash, write) answered by started
// tools with usage, now and then a synthetic result, a final reply, and
// compactions when asked for.
func Generate(opts Options) []byte {
	return GenerateBuilder(opts).Bytes()
}

// GenerateBuilder is Generate returning the builder, to go on from there.
func GenerateBuilder(opts Options) *Builder {
	if opts.MaxToolCalls <= 0 {
		opts.MaxToolCalls = 3
	}
	if opts.ResultBytes <= 0 {
		opts.ResultBytes = 600
	}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	b := NewBuilder()
	g := &generator{rng: rng, code: opts.Code}
	text, usage := g.text, g.usage
	for runs := 1; b.Facts() < int64(opts.Facts); runs++ {
		op := b.Prompt(text(120))
		steps := 1 + rng.IntN(4)
		for s := 0; ; s++ {
			step, att := b.Attempt(op, session.StepAssistant, "")
			if s == steps {
				reply := Reply(step, att, session.StopReasonStop, text(400))
				reply.ID = b.ID()
				b.Commit(reply, Usage(op, att, "", usage()),
					Finished(op, session.OperationRun, session.OutcomeCompleted, session.CompletionNormal, reply.ID, nil))
				break
			}
			n := 1 + rng.IntN(opts.MaxToolCalls)
			calls := make([]session.ToolCall, n)
			for i := range calls {
				name := tools[rng.IntN(len(tools))]
				calls[i] = Call(fmt.Sprintf("call_%d", i+1), name, fmt.Sprintf(`{"path":"src/file%d.go","limit":%d}`, rng.IntN(100), rng.IntN(500)))
			}
			b.Commit(Reply(step, att, session.StopReasonToolUse, text(80), calls...), Usage(op, att, "", usage()))
			assistant := b.Boundary()
			g.answer(b, op, step, assistant, calls, opts.ResultBytes)
		}
		if opts.CompactEvery > 0 && runs%opts.CompactEvery == 0 {
			b.Compact(text(300), 6, usage())
		}
	}
	return b
}

// generator draws the generated session's text and usage from one
// random source, in the order Generate has always drawn them.
type generator struct {
	rng  *rand.Rand
	code bool // text looks like code
}

// text is about n bytes of words (or code).
func (g *generator) text(n int) string {
	rng := g.rng
	n = n/2 + rng.IntN(n+1)
	var sb strings.Builder
	for sb.Len() < n {
		w := words[rng.IntN(len(words))]
		if !g.code {
			sb.WriteString(w)
			sb.WriteByte(' ')
			continue
		}
		switch rng.IntN(16) {
		case 0:
			sb.WriteString("\n\t")
		case 1:
			sb.WriteString(`"` + w + `"`)
		case 2, 3:
			sb.WriteString(w + "\n")
			continue
		default:
			sb.WriteString(w)
		}
		sb.WriteByte(' ')
	}
	return sb.String()
}

func (g *generator) usage() session.Usage {
	rng := g.rng
	return session.Usage{Input: int64(500 + rng.IntN(5000)), Output: int64(20 + rng.IntN(800)), CacheRead: int64(rng.IntN(4000))}
}

// answer commits the calls' results: now and then a synthetic one, else a
// started tool's result (bash with its usage).
func (g *generator) answer(b *Builder, op, step, assistant string, calls []session.ToolCall, resultBytes int) {
	for i, call := range calls {
		if g.rng.IntN(10) == 0 {
			b.Commit(Synthetic(step, assistant, i, call, session.ReasonUnknownTool))
			continue
		}
		replay, key := "never", "builtin:"+call.Function.Name+":v1"
		if call.Function.Name == "read" {
			replay = "safe"
		}
		started, result := b.StartTool(op, step, assistant, i, call, replay, key)
		rt := session.ResultSuccess
		if g.rng.IntN(8) == 0 {
			rt = session.ResultError
		}
		facts := []session.Fact{ToolResult(step, started, result, call, rt, g.text(resultBytes))}
		if call.Function.Name == "bash" {
			facts = append(facts, Usage(op, "", started, session.Usage{Input: int64(g.rng.IntN(100))}))
		}
		b.Commit(facts...)
	}
}

var tools = []string{"read", "read", "bash", "write", "edit"}

var words = strings.Fields(`the session file is the heart of the agent every fact is
durable before its effect a transaction becomes visible atomically func main
return err nil if else for range package import go build test coverage diff
patch file line column error warning compile run tool call result model step`)
