package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// Repeated compaction (runtime.md §4): every compactionStarted, the first
// or the tenth, partitions and digests every message entry of the session
// through inputThroughEntryId, the entries earlier compactions summarized
// included, as the reference runtimes require.

// wholeHistory checks every compactionStarted of data against the file's
// message entries, decoded here independently of the session package, and
// returns how many it checked. The digest is recomputed with
// encoding/json (sorted keys, no HTML escaping), which is the canonical
// form for the ASCII texts these tests write.
func wholeHistory(t *testing.T, data []byte) int {
	t.Helper()
	type item struct {
		Message       any    `json:"message"`
		SourceEntryID string `json:"sourceEntryId"`
	}
	var hist []item
	n := 0
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, line := range lines[1:] {
		var tx []factLine
		if line[0] != '[' {
			line = append(append([]byte("["), line...), ']')
		}
		if err := json.Unmarshal(line, &tx); err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		for _, f := range tx {
			if f.Kind == "entry" && f.Entry["type"] == "message" {
				hist = append(hist, item{f.Entry["message"], f.ID})
			}
			if f.Kind != "record" || f.Record["type"] != "compactionStarted" {
				continue
			}
			n++
			var listed []string
			for _, key := range []string{"compactedEntryIds", "retainedEntryIds"} {
				for _, id := range f.Record[key].([]any) {
					listed = append(listed, id.(string))
				}
			}
			var want []string
			for _, h := range hist {
				want = append(want, h.SourceEntryID)
			}
			if !slices.Equal(listed, want) {
				t.Fatalf("line %d: compaction %d lists %d entries, the session has %d message entries", i+2, n, len(listed), len(want))
			}
			if f.Record["inputThroughEntryId"] != want[len(want)-1] {
				t.Fatalf("line %d: inputThroughEntryId is not the last message entry", i+2)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(hist); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
			if got := "sha256:" + hex.EncodeToString(sum[:]); f.Record["sourceDigest"] != got {
				t.Fatalf("line %d: compaction %d sourceDigest %v, want %s over the whole history", i+2, n, f.Record["sourceDigest"], got)
			}
		}
	}
	return n
}

// checkHistory checks a finished session file: conformant, reduced, and
// every compaction over the whole history; it returns the compactions.
func checkHistory(t *testing.T, data []byte) int {
	t.Helper()
	checkConformant(t, data)
	return wholeHistory(t, data)
}

// summaryOrDone answers summary requests with a summary and anything else
// with a final answer, so a resumed session always comes to rest.
func summaryOrDone(r providertest.Request) providertest.Reply {
	if m := r.Chat.Messages; len(m) > 0 && m[0].Content != nil && *m[0].Content == SummarySystemPrompt {
		return text("RESUMED SUMMARY")
	}
	return text("done after resume")
}

// restartWith replaces the session file with data, as a crash after its
// last line would leave it, and opens it in a new agent.
func (h *harness) restartWith(data []byte) {
	h.t.Helper()
	id, path := h.store.ID(), h.store.Path()
	if err := h.store.Close(); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		h.t.Fatal(err)
	}
	writeIntegrityRecords(h.t, path, data)
	s, err := store.Open(h.dir, id, store.Options{})
	if err != nil {
		h.t.Fatalf("open a crashed prefix: %v", err)
	}
	h.t.Cleanup(func() { s.Close() })
	h.store = s
	cfg := h.cfg
	cfg.Log, cfg.hooks, cfg.Events = s, nil, h.obs.record
	h.agent = h.newAgent(cfg)
}

// writeIntegrityRecords writes the integrity records (store.IntegrityFile)
// that the store keeps for data, one per committed line, as a crash after
// its last line leaves them.
func writeIntegrityRecords(t testing.TB, sessionPath string, data []byte) {
	t.Helper()
	if _, err := store.SidecarDir(sessionPath, false); err != nil {
		return // no sidecar, no records
	}
	if err := store.SealRecords(sessionPath, data); err != nil {
		t.Fatal(err)
	}
}

// recoverPrefixes crashes the session after each line in lines (1-based,
// the header is line 1) and resumes it: the planner must bring every
// prefix to rest, and the result must keep every compaction whole.
func recoverPrefixes(t *testing.T, h *harness, lines []int) {
	t.Helper()
	full := h.bytes()
	ends := []int{0}
	for i, b := range full {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	h.server.Respond(summaryOrDone)
	for _, n := range lines {
		h.restartWith(full[:ends[n]])
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := h.agent.Resume(ctx)
		cancel()
		if err != nil {
			t.Fatalf("resume after line %d: %v", n, err)
		}
		if st := h.reduce(); !st.Idle() || st.ContinuationOwed {
			t.Fatalf("after line %d: not at rest (idle %v, continuation owed %v)", n, st.Idle(), st.ContinuationOwed)
		}
		wholeHistory(t, h.bytes())
	}
	h.restartWith(full)
}

// compactionLines are the lines of data from each compactionStarted
// through the next idle point (at most span lines), where a crash
// exercises the compaction's recovery and the continuation.
func compactionLines(data []byte, span int) []int {
	var out []int
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if bytes.Contains(line, []byte(`"type":"compactionStarted"`)) {
			for n := i + 1; n <= i+span && n <= bytes.Count(data, []byte("\n")); n++ {
				if len(out) == 0 || out[len(out)-1] < n {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// Manual /compact, 2, 3 and 10 times with runs between: each lists the
// whole history; every line of the 3-compaction session recovers.
func TestManualCompactionsListTheWholeHistory(t *testing.T) {
	for _, n := range []int{2, 3, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := newHarness(t, nil)
			h.history(0, 4)
			for i := range n {
				h.server.Enqueue(text(fmt.Sprintf("SUMMARY-%d", i+1)))
				if res, _ := h.compact(); res.Outcome != session.OutcomeCompleted {
					t.Fatalf("compaction %d: %+v", i+1, res)
				}
				h.history(10*(i+1), 2)
			}
			data := h.bytes()
			if got := checkHistory(t, data); got != n {
				t.Fatalf("%d compactions, want %d", got, n)
			}
			st := h.reduce()
			if len(st.Transcript) != 2*(4+2*n) || *st.ActiveContext[0].Content != fmt.Sprintf("%sSUMMARY-%d", CompactedHistoryPrefix, n) {
				t.Fatalf("transcript %d messages, active context starts %q", len(st.Transcript), *st.ActiveContext[0].Content)
			}
			if n == 3 {
				var all []int
				for i := 2; i <= bytes.Count(data, []byte("\n")); i++ {
					all = append(all, i)
				}
				recoverPrefixes(t, h, all)
			}
		})
	}
}

// Automatic compaction at the threshold, inside one long run: ten and
// more compactions, each over the whole history, and every crash point
// around them recovers.
func TestThresholdCompactionsListTheWholeHistory(t *testing.T) {
	h := newHarness(t, nil, withAutoCompact(longWindow, 0.85))
	longTask(t, h, 150)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if res, err := h.agent.Run(ctx, "do the long task"); err != nil || res.Answer != "The long task is done." {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	data := h.bytes()
	if n := checkHistory(t, data); n < 10 {
		t.Fatalf("%d compactions, want at least 10", n)
	}
	lines := compactionLines(data, 6)
	if testing.Short() {
		lines = lines[:12]
	}
	recoverPrefixes(t, h, lines)
}

// Provider overflow 400s inside a run, three chains in a row, the second
// of which crashes between its compaction and its continuation: every
// compaction lists the whole history and the next process continues.
func TestOverflowCompactionsListTheWholeHistory(t *testing.T) {
	accepts := 0
	crashSecond := func(l Log) Log {
		return &failingLog{Log: l, fail: func(facts []session.Fact) bool {
			if !isContinuationAccept(facts) {
				return false
			}
			accepts++
			return accepts == 2
		}}
	}
	h := newHarness(t, nil, withAutoCompact(100000, 0.85), withLog(crashSecond))
	if err := os.WriteFile(h.path("a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rounds := func(from int) {
		for i := range 4 {
			h.server.Enqueue(calls(readCall(from + i)))
		}
	}
	rounds(1)
	h.server.Enqueue(overflow400, text("SUMMARY-1"))
	rounds(5)
	h.server.Enqueue(overflow400, text("SUMMARY-2"))
	if _, err := h.agent.Run(context.Background(), "do the task"); err == nil {
		t.Fatal("Run: want the crash before the second continuation")
	}
	if st := h.reduce(); !st.ContinuationOwed {
		t.Fatal("the second compaction does not owe its continuation")
	}
	h.reopen()
	rounds(9)
	h.server.Enqueue(overflow400, text("SUMMARY-3"), text("finished"))
	res, err := h.agent.Resume(context.Background())
	if err != nil || res.Answer != "finished" {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	data := h.bytes()
	if n := checkHistory(t, data); n != 3 {
		t.Fatalf("%d compactions, want 3", n)
	}
	if got := strings.Count(h.labels(), "operationFinished:failed"); got != 3 {
		t.Fatalf("%d context_limit runs, want 3", got)
	}
	recoverPrefixes(t, h, compactionLines(data, 8))
}

// Random mixes of runs, tool rounds, retried requests, aborts, manual
// and automatic compactions always leave a file the reducer accepts whose
// every compactionStarted lists the whole history.
func TestRandomMixesKeepCompactionsWhole(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 3
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 17))
			h := newHarness(t, nil, withAutoCompact(100000, 0.85), withRetries())
			if err := os.WriteFile(h.path("a.txt"), []byte("alpha\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			h.server.Respond(summaryOrDone) // what a resumed crash asks for
			compactions := 0
			steps := 40
			if testing.Short() {
				steps = 20
			}
			for step := range steps {
				prompt := fmt.Sprintf("prompt %d %s", step, strings.Repeat("p", rng.IntN(80)))
				kind := rng.IntN(7)
				switch kind {
				case 0: // a plain answer
					h.server.Enqueue(text(fmt.Sprintf("answer %d", step)))
					h.run(prompt)
				case 1: // tool rounds
					for i := range 1 + rng.IntN(3) {
						h.server.Enqueue(calls(readCall(step*10 + i)))
					}
					h.server.Enqueue(text("tools done"))
					h.run(prompt)
				case 2: // a request retried inside its attempt
					h.server.Enqueue(providertest.Reply{Status: 503, RetryAfter: "0"}, text("after a retry"))
					h.run(prompt)
				case 6: // a crash inside a run, resumed: the planner retries the step
					h.server.Enqueue(calls(readCall(step*10)), text("tools done"))
					h.run(prompt)
					data := h.bytes()
					cut := bytes.LastIndexByte(data[:len(data)-1], '\n')
					cut = bytes.LastIndexByte(data[:cut], '\n')
					h.restartWith(data[:cut+1])
					if _, err := h.agent.Resume(context.Background()); err != nil {
						t.Fatalf("resume: %v", err)
					}
				case 3: // an aborted run
					h.server.Enqueue(providertest.Reply{Text: "never ends", ChunkSize: 3, Hang: true, After: 1})
					before := len(h.server.Requests())
					done := h.runAsync(prompt)
					waitFor(t, "the model request", func() bool { return len(h.server.Requests()) > before })
					if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
						t.Fatalf("Abort = %v, %v", ok, err)
					}
					wait(t, done)
				case 4: // manual compaction, when there is something to compact
					_, err := compactionCut(h.store.State(), false)
					if err == nil {
						h.server.Enqueue(text(fmt.Sprintf("summary %d", step)))
					}
					if _, _, got := h.agent.Compact(context.Background()); got != err {
						t.Fatalf("Compact = %v, the cut said %v", got, err)
					}
					if err == nil {
						compactions++
					}
				case 5: // an overflow inside a run: compaction and continuation
					if len(h.store.State().ActiveContext) < 4 {
						continue // nothing before this run to cut at
					}
					h.server.Enqueue(calls(readCall(step*10)), calls(readCall(step*10+1)), calls(readCall(step*10+2)), overflow400,
						text(fmt.Sprintf("summary %d", step)), text("continued"))
					h.run(prompt)
				}
				if n := h.server.Pending(); n != 0 {
					t.Fatalf("step %d (kind %d) left %d scripted replies unused: %s", step, kind, n, h.labels())
				}
			}
			n := checkHistory(t, h.bytes())
			if n < compactions {
				t.Fatalf("%d compactionStarted, %d manual compactions completed", n, compactions)
			}
			t.Logf("seed %d: %d compactions", seed, n)
		})
	}
}
