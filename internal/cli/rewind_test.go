package cli

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessioncmd"
	"github.com/tiny-agent/tiny-go/internal/fork"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

func sessionID(t *testing.T, c *cliRun) string {
	t.Helper()
	files := c.sessions()
	if len(files) == 0 {
		t.Fatal("no session")
	}
	name := filepath.Base(files[0])
	return strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
}

// threeTurns plays a scripted task over three user turns in a git work
// tree: write, edit, then sed -i, mkdir and git mv through bash, then rm
// and a write. It returns the tree before each turn and after the last.
func threeTurns(t *testing.T) (c *cliRun, id string, trees []map[string]string) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bash := func(id, cmd string) providertest.Reply {
		return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(id, "bash", `{"command":"`+cmd+`"}`)}}
	}
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "write", `{"path":"notes.txt","content":"one\n"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "edit", `{"path":"src/main.go","edits":[{"oldText":"package main","newText":"package main // edited"}]}`)}},
		providertest.Reply{Text: "turn 1 done"},
		bash("c3", "sed -i s/old/new/ doc.md && mkdir -p gen/deep && echo x > gen/deep/out.txt && git mv src/main.go src/app.go"),
		providertest.Reply{Text: "turn 2 done"},
		bash("c4", "rm doc.md && echo y >> gen/deep/out.txt && chmod +x run.sh"),
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c5", "write", `{"path":"notes.txt","content":"three\n"}`)}},
		providertest.Reply{Text: "turn 3 done"},
	)
	c = newCLI(t, srv)
	c.write("doc.md", "an old doc\n")
	c.write("src/main.go", "package main\n")
	c.write("run.sh", "echo run\n")
	c.write(".gitignore", ".tiny-agent/\n")
	checkpointtest.Sh(t, c.dir, "git init -q && git add -A && git commit -qm init")
	for i, prompt := range []string{"turn one", "turn two", "turn three"} {
		trees = append(trees, checkpointtest.TreeDigests(t, c.dir))
		args := []string{prompt}
		if i > 0 {
			args = []string{"--session", id, prompt}
		}
		if code, _, stderr := c.main("", args...); code != 0 {
			t.Fatalf("turn %d: exit %d: %s", i+1, code, stderr)
		}
		if i == 0 {
			id = sessionID(t, c)
		}
	}
	trees = append(trees, checkpointtest.TreeDigests(t, c.dir))
	return c, id, trees
}

func (c *cliRun) rewind(id string, args ...string) string {
	c.t.Helper()
	code, stdout, stderr := c.main("", append([]string{"session", "rewind", id}, args...)...)
	if code != 0 {
		c.t.Fatalf("rewind %v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

func TestRewindEveryTurnOfAScriptedTask(t *testing.T) {
	c, id, trees := threeTurns(t)
	if trees[3]["src/app.go"] == "" || trees[3]["doc.md"] != "" {
		t.Fatalf("the task did not run as scripted: %v", trees[3])
	}
	// Back to each turn, in an order that also undoes rewinds.
	for _, turn := range []int{3, 1, 2, 1, 3} {
		out := c.rewind(id, "--turn", strconv.Itoa(turn), "--files-only")
		if got := checkpointtest.TreeDigests(t, c.dir); !maps.Equal(got, trees[turn-1]) {
			t.Fatalf("rewind to turn %d:\n%v\nwant\n%v\noutput:\n%s", turn, got, trees[turn-1], out)
		}
		if strings.Contains(out, "  skip ") || strings.Contains(out, "warning") {
			t.Fatalf("rewind to turn %d skipped something:\n%s", turn, out)
		}
	}

	// A file the user edits in between is skipped and reported; --force
	// overwrites it.
	c.write("notes.txt", "my own notes\n")
	out := c.rewind(id, "--turn", "1", "--files-only")
	if !strings.Contains(out, "skip      notes.txt: changed since tiny-go last changed it") {
		t.Fatalf("user edit not reported:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(c.dir, "notes.txt")); string(b) != "my own notes\n" {
		t.Fatalf("user edit overwritten: %q", b)
	}
	want := maps.Clone(trees[0])
	got := checkpointtest.TreeDigests(t, c.dir)
	delete(got, "notes.txt")
	if !maps.Equal(got, want) {
		t.Fatalf("the other files were not put back: %v want %v", got, want)
	}
	out = c.rewind(id, "--turn", "1", "--files-only", "--force")
	if !strings.Contains(out, "deleted   notes.txt") {
		t.Fatalf("--force did not overwrite:\n%s", out)
	}
	if got := checkpointtest.TreeDigests(t, c.dir); !maps.Equal(got, trees[0]) {
		t.Fatalf("forced rewind: %v want %v", got, trees[0])
	}
	if _, err := os.Stat(filepath.Join(c.dir, "gen")); err == nil {
		t.Fatal("the directories made in turn 2 are left behind, empty")
	}

	// The conversation half is a fork at the turn's boundary.
	out = c.rewind(id, "--turn", "2", "--conversation-only")
	forkID := strings.TrimSpace(out[strings.LastIndex(out, "--session ")+len("--session "):])
	srcPath, src, err := store.ReadByID(c.dir, id)
	if err != nil {
		t.Fatal(err)
	}
	fpath, fdata, err := store.ReadByID(c.dir, forkID)
	if err != nil {
		t.Fatalf("fork %q: %v\n%s", forkID, err, out)
	}
	turns := sessionTurns(src)
	st, corrupt := session.Reduce(fdata)
	if corrupt != nil || st.Facts != turns[1].Boundary || len(st.Transcript) == 0 {
		t.Fatalf("fork state: %v facts %d, want %d", corrupt, st.Facts, turns[1].Boundary)
	}
	if o, _ := fork.ReadOrigin(fpath); o == nil || o.Source != id || o.Turn != 2 {
		t.Fatalf("origin %+v", o)
	}
	if again, _ := os.ReadFile(srcPath); string(again) != string(src) {
		t.Fatal("the source changed")
	}
	code, list, _ := c.main("", "session", "list")
	// The fork's origin is named by the source's short id.
	origin := regexp.MustCompile(`([0-9a-f-]+)@` + strconv.FormatInt(turns[1].Boundary, 10)).FindStringSubmatch(list)
	if code != 0 || !strings.Contains(list, "FORK OF") || origin == nil || !strings.HasPrefix(id, origin[1]) {
		t.Fatalf("session list:\n%s", list)
	}
	code, show, _ := c.main("", "session", "show", forkID)
	if code != 0 || !strings.Contains(show, "forked from session "+id) {
		t.Fatalf("session show of the fork:\n%s", show)
	}
	code, show, _ = c.main("", "session", "show", id)
	if code != 0 || !strings.Contains(show, "checkpoints: 5 effects") || !strings.Contains(show, "cap") {
		t.Fatalf("session show of the source:\n%s", show)
	}
}

// Fork at every seq of a real session: each fork reduces and plans like
// the source's prefix; a seq inside a transaction is refused.
func TestForkAtEverySeqOfARealSession(t *testing.T) {
	c, id, _ := threeTurns(t)
	_, src, err := store.ReadByID(c.dir, id)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := session.Reduce(src)
	bounds, err := fork.Boundaries(src)
	if err != nil {
		t.Fatal(err)
	}
	isBound := map[int64]bool{}
	for _, b := range bounds {
		isBound[b] = true
	}
	current := recovery.Current{EnvironmentIdentity: full.Header.EnvironmentIdentity}
	for at := int64(0); at <= full.Facts; at++ {
		code, out, stderr := c.main("", "session", "fork", id, "--at", strconv.FormatInt(at, 10))
		if !isBound[at] {
			if code == 0 || !strings.Contains(stderr, "inside a transaction") {
				t.Fatalf("fork at %d inside a transaction: exit %d %s", at, code, stderr)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("fork at %d: %s", at, stderr)
		}
		forkID := strings.TrimSpace(out[strings.LastIndex(out, "--session ")+len("--session "):])
		_, fdata, err := store.ReadByID(c.dir, forkID)
		if err != nil {
			t.Fatal(err)
		}
		// The source's prefix, cut independently of the fork code.
		var prefix []byte
		for off := 0; ; {
			i := strings.IndexByte(string(src[off:]), '\n')
			off += i + 1
			if st, c := session.Reduce(src[:off]); c == nil && st.Facts == at {
				prefix = src[:off]
				break
			}
		}
		got, corrupt := session.Reduce(fdata)
		if corrupt != nil {
			t.Fatalf("fork at %d: %v", at, corrupt)
		}
		want, _ := session.Reduce(prefix)
		if got.Header.ID != forkID {
			t.Fatalf("fork header id %s, want %s", got.Header.ID, forkID)
		}
		got.Header.ID = want.Header.ID
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("fork at %d reduces differently from the prefix", at)
		}
		if !reflect.DeepEqual(recovery.Plan(got, current), recovery.Plan(want, current)) {
			t.Fatalf("fork at %d plans differently from the prefix", at)
		}
		if strings.Replace(string(fdata), forkID, id, 1) != string(prefix) {
			t.Fatalf("fork at %d is not byte-identical to the prefix but for the id", at)
		}
	}
}

// SIGKILL at random points of a rewind (a real process), then the same
// command again: every file is at all times either put back or untouched,
// and the rerun finishes the job.
func TestRewindSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills many processes")
	}
	const n = 300
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash",
			`{"command":"for f in seed/*; do echo changed >> $f; done; mkdir -p new; for i in $(seq `+strconv.Itoa(n)+`); do echo $i > new/n$i; done"}`)}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	for i := 0; i < n; i++ {
		c.write("seed/f"+strconv.Itoa(i), "seed "+strconv.Itoa(i)+"\n")
	}
	before := checkpointtest.TreeDigests(t, c.dir)
	if code, _, stderr := c.main("", "change everything"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	after := checkpointtest.TreeDigests(t, c.dir)
	id := sessionID(t, c)
	dir := c.dir
	index := filepath.Join(strings.TrimSuffix(c.sessions()[0], ".jsonl")+".d", "checkpoints.jsonl")
	// The state to start each kill from: the files as the task left them
	// and the checkpoint index before any rewind was recorded in it.
	afterFiles := map[string][]byte{}
	for p := range after {
		afterFiles[p], _ = os.ReadFile(filepath.Join(dir, p))
	}
	indexBytes, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	reset := func() {
		for p, b := range afterFiles {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, p), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(index, indexBytes, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	prog := programAs(t, "tiny-go")
	rewind := func() *exec.Cmd {
		cmd := exec.Command(prog, "--cwd", dir, "session", "rewind", id, "--turn", "1", "--files-only")
		cmd.Env = append(os.Environ(), childEnv+"=1", "OTEL_SDK_DISABLED=true")
		return cmd
	}
	// An uninterrupted rewind gives the time scale of the kills.
	began := time.Now()
	if out, err := rewind().CombinedOutput(); err != nil {
		t.Fatalf("rewind: %v\n%s", err, out)
	}
	full := time.Since(began)
	if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, before) {
		t.Fatal("uninterrupted rewind did not restore the tree")
	}
	// The paths the rewind changes: seed files to restore, new files to
	// delete.
	total := 0
	for p := range after {
		if before[p] != after[p] {
			total++
		}
	}
	pauseFile := filepath.Join(t.TempDir(), "paused")
	paused := programAs(t, "tiny-go-rewind-pause")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	// Kill 0 lands midway for certain: the rewind pauses (a test seam in
	// checkpoint.Apply) after exactly half of its paths, with its journal
	// written, and is killed there. Kills 1-6 land at random times.
	for iter := 0; iter < 7; iter++ {
		reset()
		if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, after) {
			t.Fatal("reset failed")
		}
		cmd := rewind()
		if iter == 0 {
			os.Remove(pauseFile)
			cmd.Path, cmd.Args[0] = paused, paused
			cmd.Env = append(cmd.Env, rewindPauseEnv+"="+strconv.Itoa(total/2)+":"+pauseFile)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if iter == 0 {
			waitFile(t, pauseFile)
		} else {
			time.Sleep(time.Duration(rng.Int64N(int64(full))))
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		got := checkpointtest.TreeDigests(t, dir)
		done, untouched := 0, 0
		for p, d := range got {
			switch {
			case strings.Contains(p, ".tiny-tmp-"):
			case d == before[p] && d == after[p]:
			case d == before[p]:
				done++ // restored
			case d == after[p]:
				untouched++
			default:
				t.Fatalf("iteration %d: %s is neither restored nor untouched", iter, p)
			}
		}
		for p := range after {
			if _, ok := got[p]; !ok && before[p] == "" {
				done++ // deleted
			}
		}
		if iter == 0 {
			if done != total/2 || untouched != total-total/2 {
				t.Fatalf("the paused kill: %d of %d paths done, %d untouched; want %d and %d", done, total, untouched, total/2, total-total/2)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(index), rewindcmd.JournalFile)); err != nil {
				t.Fatalf("the rewind killed midway left no journal: %v", err)
			}
		}
		if done > 0 && untouched > 0 {
			t.Logf("iteration %d: killed midway, %d of %d paths done", iter, done, total)
		}
		if out, err := rewind().CombinedOutput(); err != nil {
			t.Fatalf("rerun: %v\n%s", err, out)
		}
		if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, before) {
			t.Fatalf("iteration %d: the rerun did not finish the rewind", iter)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(index), rewindcmd.JournalFile)); err == nil {
			t.Fatalf("iteration %d: the journal is left behind", iter)
		}
	}
	t.Logf("full rewind %v", full)
}

// rewindPauseEnv is "<n>:<file>": the tiny-go-rewind-pause child writes
// file and sleeps once its rewind has done n paths.
const rewindPauseEnv = "TINY_TEST_REWIND_PAUSE"

func init() {
	scriptCommands["tiny-go-rewind-pause"] = func() {
		at, file, _ := strings.Cut(os.Getenv(rewindPauseEnv), ":")
		n, err := strconv.Atoi(at)
		if err != nil || file == "" {
			fmt.Fprintln(os.Stderr, "bad", rewindPauseEnv)
			os.Exit(3)
		}
		rewindcmd.AfterApply = func(done int) {
			if done == n {
				_ = os.WriteFile(file, []byte("paused\n"), 0o600)
				time.Sleep(time.Hour)
			}
		}
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
}

// /rewind in interactive (line) mode: the list of turns, the preview and
// the confirmation, then the files are back, the conversation continues in
// the fork, and the resume hint names the fork.
func TestRewindCommandInLineMode(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "write", `{"path":"a.txt","content":"first\n"}`)}},
		providertest.Reply{Text: "wrote a"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"echo second > a.txt; echo new > b.txt"}`)}},
		providertest.Reply{Text: "changed a, made b"},
		providertest.Reply{Text: "continuing in the fork"},
	)
	c := newCLI(t, srv)
	c.write("a.txt", "original\n")
	before := checkpointtest.TreeDigests(t, c.dir)
	stdin := "write a\nchange a\n/rewind\n2 files force\nno\n/rewind 2\ny\nagain from turn 2\n"
	code, stdout, stderr := c.main(stdin, "--approval", "auto")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{
		"Earlier turns", "   1  ", "write a", "   2  ", "change a",
		"Rewinding files to before turn 2 (change a) will:", "restore   a.txt", "delete    b.txt", "Rewind? y",
		"Rewind cancelled; nothing changed.",
		"The conversation goes back to before turn 2 in a new session",
		"Files put back to before turn 2", "Now in session ", "continuing in the fork",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(c.dir, "a.txt")); string(b) != "first\n" {
		t.Fatalf("a.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "b.txt")); err == nil {
		t.Fatal("b.txt is still there")
	}
	_ = before
	i := strings.Index(stdout, "Now in session ")
	forkID := strings.Fields(stdout[i+len("Now in session "):])[0]
	forkID = strings.TrimSuffix(forkID, ":")
	if !strings.Contains(stdout, "Resume: tiny-go --session "+forkID) {
		t.Fatalf("resume hint does not name the fork %s:\n%s", forkID, stdout)
	}
	_, data, err := store.ReadByID(c.dir, forkID)
	if err != nil {
		t.Fatal(err)
	}
	turns := sessionTurns(data)
	if len(turns) != 2 || turns[0].Prompt != "write a" || turns[1].Prompt != "again from turn 2" {
		t.Fatalf("fork turns %+v", turns)
	}
}

// A fork taken inside an open operation (after a tool call's intent, before
// its result) is recovered like any open session when resumed.
func TestForkInsideAnOpenOperationResumes(t *testing.T) {
	c, id, _ := threeTurns(t)
	_, src, err := store.ReadByID(c.dir, id)
	if err != nil {
		t.Fatal(err)
	}
	var at int64
	for _, tx := range committedTransactions(src) {
		if _, ok := tx.Facts[0].Record.(*session.ToolStarted); ok && at == 0 {
			at = tx.Facts[len(tx.Facts)-1].Seq // the first tool call's intent
		}
	}
	code, out, stderr := c.main("", "session", "fork", id, "--at", strconv.FormatInt(at, 10))
	if code != 0 {
		t.Fatalf("fork: %s", stderr)
	}
	forkID := strings.TrimSpace(out[strings.LastIndex(out, "--session ")+len("--session "):])
	_, fdata, _ := store.ReadByID(c.dir, forkID)
	if st, _ := session.Reduce(fdata); st.Operation == nil {
		t.Fatal("the fork has no open operation")
	}
	srv := providertest.New(t, providertest.Reply{Text: "recovered"}, providertest.Reply{Text: "and went on"})
	c.env["TINY_ENDPOINT"] = srv.URL()
	code, out, stderr = c.main("", "--session", forkID, "go on")
	if code != 0 || !strings.Contains(stderr, "Recovered the open run") || !strings.Contains(out, "and went on") {
		t.Fatalf("resume of the fork: exit %d\n%s\n%s", code, out, stderr)
	}
	_, fdata, _ = store.ReadByID(c.dir, forkID)
	st, corrupt := session.Reduce(fdata)
	if corrupt != nil || st.Operation != nil {
		t.Fatalf("fork after resume: %v, open %v", corrupt, st.Operation)
	}
	if again, _ := os.ReadFile(c.sessions()[0]); len(again) == 0 {
		t.Fatal("source gone")
	}
}

func TestRewindRefusesASessionOpenElsewhere(t *testing.T) {
	c, id, _ := threeTurns(t)
	st, err := store.Open(c.dir, id, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	code, _, stderr := c.main("", "session", "rewind", id, "--turn", "1")
	if code == 0 || !strings.Contains(stderr, "is open in another process") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// Calls that ran with checkpoints off are named at rewind time.
func TestRewindNamesCallsWithoutCheckpoints(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo x > x.txt"}`)}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	c.env["TINY_CHECKPOINTS"] = "off"
	if code, _, stderr := c.main("", "make x"); code != 0 {
		t.Fatal(stderr)
	}
	out := c.rewind(sessionID(t, c), "--turn", "1", "--files-only")
	if !strings.Contains(out, "warning   no checkpoint was recorded for bash (c1, seq ") {
		t.Fatalf("output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "x.txt")); err != nil {
		t.Fatal("x.txt was touched")
	}
}

// A call the user denied never ran: rewinding past it warns about nothing,
// while a call that ran without a checkpoint is still named.
func TestRewindDoesNotWarnAboutDeniedCalls(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo x > x.txt"}`)}},
		providertest.Reply{Text: "it was denied"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"echo y > y.txt"}`)}},
		providertest.Reply{Text: "made y"},
	)
	c := newCLI(t, srv)
	c.env["TINY_CHECKPOINTS"] = "off"
	if code, stdout, stderr := c.main("make x\nn not now\nmake y\ny\n/exit\n", "--approval", "ask"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	out := c.rewind(sessionID(t, c), "--turn", "1", "--files-only")
	if strings.Contains(out, "for bash (c1,") {
		t.Fatalf("warns about the denied call:\n%s", out)
	}
	if !strings.Contains(out, "no checkpoint was recorded for bash (c2, seq ") {
		t.Fatalf("does not name the call that ran:\n%s", out)
	}
}

// A conversation rewind to turn 1 that is left without a prompt leaves
// neither the empty fork nor its origin beside it.
func TestEmptyForkLeavesNothingBehind(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "hi"})
	c := newCLI(t, srv)
	if code, stdout, stderr := c.main("one\n/rewind 1\ny\n/exit\n", "--approval", "auto"); code != 0 || !strings.Contains(stdout, "Now in session ") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	entries, err := os.ReadDir(filepath.Join(c.dir, ".tiny-agent", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok {
			files[name] = true
		}
	}
	if len(files) != 1 {
		t.Fatalf("%d session files, want the source only", len(files))
	}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".d"); ok && !files[name] {
			t.Errorf("%s is left without its session", e.Name())
		}
	}
}

// sessionTurns lists the user turns of a session's bytes.
func sessionTurns(data []byte) []rewindcmd.Turn {
	var t rewindcmd.TurnLog
	_ = sessioncmd.EachTransaction(bytes.NewReader(data), func(tx sessioncmd.Transaction) bool {
		t.Add(tx.Facts)
		return true
	})
	return t.Turns
}

// committedTransactions decodes the transactions of a session's bytes.
func committedTransactions(data []byte) []sessioncmd.Transaction {
	var out []sessioncmd.Transaction
	_ = sessioncmd.EachTransaction(bytes.NewReader(data), func(tx sessioncmd.Transaction) bool {
		tx.Facts = slices.Clone(tx.Facts)
		out = append(out, tx)
		return true
	})
	return out
}
