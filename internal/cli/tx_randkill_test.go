package cli

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/faultpoint"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// killPointEnv is "<point>:<n>:<file>": the tiny-go-killpoint child
// writes the point's name to file and SIGKILLs itself at the n-th time it
// reaches the named instant (package faultpoint).
const killPointEnv = "TINY_TEST_KILL_AT"

func init() {
	scriptCommands["tiny-go-killpoint"] = func() {
		if spec := os.Getenv(killPointEnv); spec != "" {
			parts := strings.SplitN(spec, ":", 3)
			n, err := strconv.Atoi(parts[min(1, len(parts)-1)])
			if len(parts) != 3 || err != nil {
				fmt.Fprintln(os.Stderr, "bad", killPointEnv)
				os.Exit(3)
			}
			var mu sync.Mutex
			hits := 0
			faultpoint.Set(func(name string) {
				if name != parts[0] {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if hits++; hits == n {
					_ = os.WriteFile(parts[2], []byte(name+"\n"), 0o600)
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
					time.Sleep(time.Hour)
				}
			})
		}
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
}

// The phases a kill can land in (issue 42: command, apply, state write,
// rewind), and the instants around them.
const (
	phaseStart   = "before the command"
	phaseCommand = "command"
	phaseApply   = "apply"
	phaseState   = "state write"
	phaseAfter   = "after the turn's states"
	phaseRewind  = "rewind"
	phaseRwEnd   = "rewind record"
)

// The turn of TestKilledAnywhereIsRewoundExactly: appends to 30 files,
// deletes a folder of 30, makes 40 files in a new folder, renames one,
// changes a mode, renames a folder of 12 and changes a file in it (as
// root a rename of the folder itself: redirect_dir).
const randKillCommand = `for f in seed/*; do echo changed >> $f; done; rm -rf nm; mkdir -p new/deep; for i in $(seq 40); do echo $i > new/deep/n$i; done; mv keep.txt kept.txt; chmod 600 mode.txt; mv lib lib2; echo changed >> lib2/sub/l1`

// TestKilledAnywhereIsRewoundExactly SIGKILLs tiny-go 200 times, at
// random instants and at named ones (faultpoint), across a command, its
// apply, the writing of its states and the rewind of its turn. After each
// kill the next start (a new session) finds the tree before or after the
// turn as a whole (a command killed while it ran is applied as far as it
// got, path by path); a rewind killed midway leaves each path put back or
// untouched, and the next rewind gives the tree back exactly.
func TestKilledAnywhereIsRewoundExactly(t *testing.T) {
	killAnywhere(t, false, []string{phaseCommand, phaseApply, phaseState, phaseRewind})
}

// TestKilledAnywhereJournaledIsRewoundExactly is the same with the turn's
// command journaled on the tree (TINY_TX=journal): a kill in the command
// leaves each path as before or after (its changes went on one by one,
// as in plain bash), one in the writing of its states leaves them to the
// next start, and the rewind after any of them is exact. There is no
// apply to kill.
func TestKilledAnywhereJournaledIsRewoundExactly(t *testing.T) {
	killAnywhere(t, true, []string{phaseCommand, phaseState, phaseRewind})
}

// killAnywhere runs the kills, over the overlay or journaled, and fails
// unless some landed in each of phases.
func killAnywhere(t *testing.T, journaled bool, phases []string) {
	if testing.Short() {
		t.Skip("starts and kills hundreds of processes")
	}
	const workers, kills = 4, 200
	var mu sync.Mutex
	landed := map[string]int{}
	total := 0
	began := time.Now()
	// Subtests started from goroutines, not t.Parallel: they would wait
	// for one another past GOMAXPROCS, and the workers mostly wait on
	// processes.
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(fmt.Sprint("worker", w), func(t *testing.T) {
				k := newKillRun(t, journaled)
				for {
					mu.Lock()
					done := total >= kills
					mu.Unlock()
					if done || t.Failed() {
						t.Logf("%d iterations", k.iter)
						return
					}
					got := k.iteration()
					mu.Lock()
					for _, p := range got {
						landed[p]++
						total++
					}
					mu.Unlock()
				}
			})
		}()
	}
	wg.Wait()
	t.Logf("%d kills in %v, landed: %v", total, time.Since(began).Round(time.Millisecond), landed)
	for _, p := range phases {
		if landed[p] == 0 && !t.Failed() {
			t.Errorf("no kill landed in the %s", p)
		}
	}
}

// killRun is one worker's: a program, timings of a whole turn and rewind.
type killRun struct {
	t                *testing.T
	prog             string
	turnTime, rwTime time.Duration
	rng              *rand.Rand
	marks            string
	iter             int
	before           map[string]string
	after            map[string]string
	journaled        bool // the command runs on the tree, journaled (TINY_TX=journal)
}

func newKillRun(t *testing.T, journaled bool) *killRun {
	k := &killRun{t: t, prog: programAs(t, "tiny-go-killpoint"), marks: t.TempDir(), journaled: journaled,
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))}
	// One whole turn and rewind: the time scale of the random kills, and
	// the tree after the turn.
	dir, srv := k.seed()
	start := time.Now()
	if out, err := k.cmd(dir, srv, "", "change everything").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	k.turnTime = time.Since(start)
	k.after = checkpointtest.Listing(t, dir)
	id := killedSession(t, dir)
	start = time.Now()
	if out, err := k.cmd(dir, srv, "", "session", "rewind", id, "--turn", "1", "--files-only").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	k.rwTime = time.Since(start)
	if d := listingDiff(checkpointtest.Listing(t, dir), k.before); d != "" {
		t.Fatalf("the uninterrupted rewind:\n%s", d)
	}
	t.Logf("a whole turn %v, its rewind %v", k.turnTime, k.rwTime)
	return k
}

// seed makes a fresh tree and a model that answers one turn.
func (k *killRun) seed() (string, *providertest.Server) {
	srv := providertest.New(k.t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(k.t, map[string]string{"command": randKillCommand}))}},
		providertest.Reply{Text: "done"},
	)
	dir := filepath.Join(k.t.TempDir(), "work")
	for i := range 30 {
		os.MkdirAll(filepath.Join(dir, "seed"), 0o755)
		os.MkdirAll(filepath.Join(dir, "nm", fmt.Sprint("p", i%3)), 0o755)
		os.WriteFile(filepath.Join(dir, "seed", fmt.Sprint("f", i)), []byte(fmt.Sprintln("seed", i)), 0o644)
		os.WriteFile(filepath.Join(dir, "nm", fmt.Sprint("p", i%3), fmt.Sprint("m", i)), []byte("m\n"), 0o644)
	}
	for i := range 12 {
		os.MkdirAll(filepath.Join(dir, "lib", "sub"), 0o755)
		os.WriteFile(filepath.Join(dir, "lib", "sub", fmt.Sprint("l", i)), []byte(fmt.Sprintln("lib", i)), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("keep\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "mode.txt"), []byte("mode\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	k.before = checkpointtest.Listing(k.t, dir)
	return dir, srv
}

func (k *killRun) cmd(dir string, srv *providertest.Server, killAt string, args ...string) *exec.Cmd {
	cmd := exec.Command(k.prog, append([]string{"--cwd", dir}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=k", "TINY_ENDPOINT="+srv.URL())
	if k.journaled {
		cmd.Env = append(cmd.Env, "TINY_TX=journal")
	} else {
		cmd.Env = append(cmd.Env, "TINY_TX=overlay")
	}
	if killAt != "" {
		cmd.Env = append(cmd.Env, killPointEnv+"="+killAt)
	}
	return cmd
}

// kill runs cmd and kills it: at the named instant of spec
// ("<point>:<n>"), or, for "", after a random part of scale. It returns
// the named point it was killed at, "" when killed at a random instant,
// and "finished" when the process ended first.
func (k *killRun) kill(cmd *exec.Cmd, spec string, scale time.Duration) string {
	mark := filepath.Join(k.marks, fmt.Sprint("killed", k.iter))
	os.Remove(mark)
	if spec != "" {
		cmd.Env = append(cmd.Env, killPointEnv+"="+spec+":"+mark)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	if spec == "" {
		time.Sleep(time.Duration(k.rng.Int64N(int64(scale))))
		cmd.Process.Signal(syscall.SIGKILL)
	}
	err := cmd.Wait()
	if data, rerr := os.ReadFile(mark); rerr == nil {
		return strings.TrimSpace(string(data))
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ""
	}
	if err != nil && spec != "" && !strings.Contains(out.String(), "no user turn") {
		k.t.Fatalf("%s ended with %v before its kill:\n%s", cmd.Args, err, out.String())
	}
	return "finished"
}

// turnKills are the named instants of a turn, by weight.
var turnKills = []string{faultpoint.TxJournal + ":1", faultpoint.TxMirror + ":1", faultpoint.TxStep, faultpoint.TxStep, faultpoint.TxLayers + ":1",
	faultpoint.TxStates + ":1", faultpoint.TxRecorded + ":1"}

// journalTurnKills are the named instants of a journaled turn.
var journalTurnKills = []string{faultpoint.TxStates + ":1", faultpoint.TxRecorded + ":1"}

// journalTurnPhase names where a journaled turn's kill landed.
func journalTurnPhase(dir, at string) string {
	switch at {
	case "finished":
		return at
	case faultpoint.TxStates, faultpoint.TxRecorded:
		return phaseState
	}
	txRoot := filepath.Join(dir, ".tiny-agent", "checkpoints", "tx")
	if pending, _ := filepath.Glob(filepath.Join(txRoot, "journal-pending", "*")); len(pending) > 0 {
		return phaseCommand
	}
	if states, _ := filepath.Glob(filepath.Join(txRoot, "*", statesName)); len(states) > 0 {
		return phaseAfter
	}
	return phaseStart
}

// iteration kills one turn and its rewind, then checks the next start
// and rewind; it returns the phases its kills landed in.
func (k *killRun) iteration() []string {
	t := k.t
	k.iter++
	dir, srv := k.seed()
	spec, kills := "", turnKills
	if k.journaled {
		kills = journalTurnKills
	}
	if k.rng.IntN(5) >= 2 {
		spec = kills[k.rng.IntN(len(kills))]
		if spec == faultpoint.TxStep {
			spec += ":" + fmt.Sprint(1+k.rng.IntN(34))
		}
	}
	at := k.kill(k.cmd(dir, srv, "", "change everything"), spec, k.turnTime)
	phase := turnPhase(dir, at)
	if k.journaled {
		phase = journalTurnPhase(dir, at)
	}
	var landed []string
	if phase != "finished" {
		landed = append(landed, phase)
	}
	sessions, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	// The next start finishes what the kill left: the tree is the turn's
	// before or after, whole (a killed command's changes so far, path by
	// path).
	// (A third of the kills in the command are left to the rewind, which
	// finishes them first as well.)
	if phase != phaseCommand && phase != phaseStart || k.rng.IntN(3) == 0 {
		next := providertest.New(t, providertest.Reply{Text: "hello again"})
		if out, err := k.cmd(dir, next, "", "hello").CombinedOutput(); err != nil {
			t.Fatalf("iteration %d (killed: %s): the next start: %v\n%s", k.iter, phase, err, out)
		}
		k.checkWhole(dir, phase)
	}
	if len(sessions) == 1 {
		id := killedSession(t, dir, sessions[0])
		rw := func() *exec.Cmd {
			return k.cmd(dir, srv, "", "session", "rewind", id, "--turn", "1", "--files-only")
		}
		// One or two kills of the rewind, each after a random number of
		// paths, past the last one, or at a random instant.
		for kill := range 2 {
			if kill == 1 && k.rng.IntN(2) == 0 {
				break
			}
			rspec := ""
			switch k.rng.IntN(5) {
			case 0, 1:
				rspec = faultpoint.RewindPut + ":" + fmt.Sprint(2+k.rng.IntN(150))
			case 2:
				rspec = faultpoint.RewindDone + ":1"
			case 3:
				rspec = faultpoint.RewindDir + ":" + fmt.Sprint(1+k.rng.IntN(5))
			}
			if rat := k.kill(rw(), rspec, k.rwTime); rat != "finished" {
				landed = append(landed, map[bool]string{true: phaseRwEnd, false: phaseRewind}[rat == faultpoint.RewindDone])
				k.checkPaths(dir, "the killed rewind", phase == phaseCommand)
			}
		}
		if out, err := rw().CombinedOutput(); err != nil && !strings.Contains(string(out), "no user turn") {
			t.Fatalf("iteration %d (killed: %v): the rewind after the kills: %v\n%s", k.iter, landed, err, out)
		}
		if d := listingDiff(checkpointtest.Listing(t, dir), k.before); d != "" {
			t.Fatalf("iteration %d (killed: %v): the rewind after the kills left:\n%s", k.iter, landed, d)
		}
	} else if d := listingDiff(checkpointtest.Listing(t, dir), k.before); d != "" {
		t.Fatalf("iteration %d: killed with no session, the tree changed:\n%s", k.iter, d)
	}
	if pending, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx", "*pending", "*")); len(pending) != 0 {
		t.Fatalf("iteration %d (killed: %v): still pending: %v", k.iter, landed, pending)
	}
	return landed
}

// turnPhase names where the turn's kill landed: the named point, or what
// a kill at a random instant left on disk.
func turnPhase(dir, at string) string {
	switch at {
	case "finished":
		return at
	case faultpoint.TxJournal, faultpoint.TxMirror, faultpoint.TxStep, faultpoint.TxLayers:
		return phaseApply
	case faultpoint.TxStates, faultpoint.TxRecorded:
		return phaseState
	}
	txRoot := filepath.Join(dir, ".tiny-agent", "checkpoints", "tx")
	if pending, _ := filepath.Glob(filepath.Join(txRoot, "pending", "*")); len(pending) > 0 {
		if _, err := os.Stat(filepath.Join(txRoot, filepath.Base(pending[0]), "journal.json")); err == nil {
			return phaseApply
		}
		return phaseCommand
	}
	journals, _ := filepath.Glob(filepath.Join(txRoot, "*", "journal.json"))
	if len(journals) == 0 {
		return phaseStart
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(journals[0]), statesName)); err != nil {
		return phaseState
	}
	return phaseAfter
}

const statesName = "states.json"

// checkWhole: after the next start, the tree is the turn's before or
// after as a whole, or, when the command itself was killed, each path is
// as before or as after.
func (k *killRun) checkWhole(dir, phase string) {
	got := checkpointtest.Listing(k.t, dir)
	switch phase {
	case phaseCommand, phaseStart:
		k.checkPaths(dir, "the next start after a kill in the "+phase, true)
	case phaseApply, phaseState, phaseAfter, "finished":
		if d := listingDiff(got, k.after); d != "" {
			k.t.Fatalf("iteration %d: killed in the %s, the next start left a mix:\n%s", k.iter, phase, d)
		}
	}
}

// emptyFile is an empty file's listing with mode 644.
const emptyFile = "-rw-r--r-- e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// checkPaths: every path is as before the turn or as after it; when
// command, a file the command made may also be empty (the shell killed
// between its open and its write, as in plain bash), and a directory it
// made by a copying mv may be partial.
func (k *killRun) checkPaths(dir, when string, command bool) {
	got := checkpointtest.Listing(k.t, dir)
	var bad []string
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if strings.Contains(p, ".tiny-tmp-") && when == "the killed rewind" {
			continue // a put's temporary: the next rewind removes it
		}
		if command && got[p] == emptyFile && k.before[p] == "" && strings.HasPrefix(k.after[p], "-") {
			continue
		}
		if command && copiedDirs && !k.journaled && (p == "lib2" || strings.HasPrefix(p, "lib2/")) {
			// Without root `mv lib lib2` is a copy (the kernel refuses
			// redirect_dir in a user namespace): killed midway, the copy
			// is as partial as plain bash's cp leaves it (0700
			// directories, 0600 or short files).
			continue
		}
		if command && k.before[p] == "" && k.movedUnchanged(p, got[p]) {
			continue // moved by the command, killed before it changed it
		}
		if got[p] != k.before[p] && got[p] != k.after[p] {
			bad = append(bad, fmt.Sprintf("%s: %q", p, got[p]))
		}
	}
	if len(bad) > 0 {
		k.t.Fatalf("iteration %d: %s left paths neither before nor after the turn:\n%s", k.iter, when, strings.Join(bad, "\n"))
	}
}

// copiedDirs: renames of directories in commands are copies (not root).
var copiedDirs = os.Geteuid() != 0

// movedUnchanged reports whether entry at p, a path the command made, is
// a file from before the turn under the same name elsewhere: moved (mv lib
// lib2), and the command killed before it changed it, as in plain bash.
func (k *killRun) movedUnchanged(p, entry string) bool {
	if !strings.HasPrefix(entry, "-") {
		return false
	}
	for q, was := range k.before {
		if was == entry && path.Base(q) == path.Base(p) {
			return true
		}
	}
	return false
}

// killedSession is the id of the session in file (or dir's only session).
func killedSession(t *testing.T, dir string, file ...string) string {
	t.Helper()
	if len(file) == 0 {
		file, _ = filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
		if len(file) != 1 {
			t.Fatalf("%d sessions", len(file))
		}
	}
	name := filepath.Base(file[0])
	return strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
}
