package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/statekey"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// The attacks of issue 40 on what tiny-go keeps under .tiny-agent, each
// through the real binary: a forged entry of each kind gives one line
// naming what was refused, and a canary folder outside the tree is left
// as it was. (The overlay's own cases, with a racing symlink, are in
// internal/overlay/forged_test.go; the session records' in
// internal/store/keyed_test.go.)

// forgedRun is a tree with one session whose bash call changed a.txt
// (and made b.txt) as a transaction, a key of its own, and a canary.
type forgedRun struct {
	*cliRun
	id, outside string
	// uid runs tiny-go (the real binary, bin) as that user when not 0,
	// with a HOME and a key folder of its own holding the tests' key:
	// the forgeries below are then what that user's commands could
	// write had they the key, which its commands cannot read.
	uid int
	bin string
}

// forEachUser runs test as root (this process) and as the unprivileged
// user, each with tiny-go run as that user.
func forEachUser(t *testing.T, test func(t *testing.T, uid int)) {
	if testing.Short() {
		t.Skip("runs tiny-go as a real process")
	}
	t.Run("root", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root")
		}
		test(t, 0)
	})
	t.Run("user", func(t *testing.T) { test(t, testenv.Unprivileged()) })
}

func newForgedRun(t *testing.T, uid int, replies ...providertest.Reply) *forgedRun {
	srv := providertest.New(t, append([]providertest.Reply{
		bashCall(t, "echo changed > a.txt && echo new > b.txt"),
		{Text: "done"},
	}, replies...)...)
	c := newCLI(t, srv)
	c.env["TINY_ENDPOINT"] = srv.URL()
	c.env[statekey.EnvDir] = os.Getenv(statekey.EnvDir)
	c.write("a.txt", "original\n")
	r := &forgedRun{cliRun: c, outside: filepath.Join(filepath.Dir(c.dir), "outside"), uid: uid}
	os.MkdirAll(filepath.Join(r.outside, "dir"), 0o755)
	os.WriteFile(filepath.Join(r.outside, "precious"), []byte("keep\n"), 0o644)
	if uid != os.Geteuid() {
		r.asUser(t)
	}
	if code, _, stderr := r.run("", "work"); code != 0 {
		t.Fatalf("first run: %d %s", code, stderr)
	}
	r.id = sessionID(t, c)
	if fi, err := os.Stat(r.sessions()[0]); err != nil || fi.Sys().(*syscall.Stat_t).Uid != uint32(uid) {
		t.Fatalf("the session was not written by uid %d: %v", uid, err)
	}
	return r
}

// asUser gives the run to r.uid: the real binary, a HOME, and a key
// folder holding this process's key (so the tests can seal as tiny-go
// does, which is more than an attacker has).
func (r *forgedRun) asUser(t *testing.T) {
	key, err := statekey.Key()
	if err != nil {
		t.Fatal(err)
	}
	r.bin = forgedBinary(t)
	base := filepath.Dir(r.dir)
	home, keyDir, tmp := filepath.Join(base, "home"), filepath.Join(base, "key"), filepath.Join(base, "tmp")
	os.Mkdir(home, 0o755)
	os.Mkdir(keyDir, 0o700)
	os.Mkdir(tmp, 0o700)
	if err := os.WriteFile(filepath.Join(keyDir, "key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	r.env["HOME"], r.env[statekey.EnvDir], r.env["TMPDIR"] = home, keyDir, tmp
	r.own(t)
}

// own gives the tree, the canary, HOME and the key to r.uid again (the
// test's forgeries are written as root).
func (r *forgedRun) own(t *testing.T) {
	t.Helper()
	if r.uid == os.Geteuid() {
		return
	}
	// Only what is not the user's: a chown changes the ctime of what it
	// touches, and tiny-go checks kept originals by it.
	filepath.WalkDir(filepath.Dir(r.dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.Sys().(*syscall.Stat_t).Uid != uint32(r.uid) {
			if err := os.Lchown(p, r.uid, r.uid); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
}

var (
	forgedBinOnce sync.Once
	forgedBin     string
	forgedBinErr  error
)

// forgedBinary is the real binary, built once for the package's tests
// into a folder every user can enter.
func forgedBinary(t *testing.T) string {
	forgedBinOnce.Do(func() {
		if bin := os.Getenv(testenv.BinaryEnv); bin != "" {
			forgedBin = bin
			return
		}
		dir, err := os.MkdirTemp("", "tiny-go-forged-bin-")
		if err != nil {
			forgedBinErr = err
			return
		}
		os.Chmod(dir, 0o755)
		forgedBin = filepath.Join(dir, "tiny-go")
		out, err := exec.Command("go", "build", "-o", forgedBin, "github.com/tiny-agent/tiny-go/cmd/tiny-go").CombinedOutput()
		if err != nil {
			forgedBinErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if forgedBinErr != nil {
		t.Fatal(forgedBinErr)
	}
	return forgedBin
}

// run runs tiny-go in the tree: this test binary as root, the real one
// as another user.
func (r *forgedRun) run(stdin string, args ...string) (int, string, string) {
	cmd := r.command(r.env["TINY_ENDPOINT"], append([]string{"--cwd", r.dir}, args...)...)
	if r.bin != "" {
		r.own(r.t)
		cmd.Path, cmd.Args[0] = r.bin, r.bin
		testenv.AsUser(cmd, r.uid)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		r.t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

func (r *forgedRun) canaryIntact(t *testing.T) {
	t.Helper()
	entries, _ := os.ReadDir(r.outside)
	data, _ := os.ReadFile(filepath.Join(r.outside, "precious"))
	if len(entries) != 2 || string(data) != "keep\n" {
		t.Fatalf("the folder outside the tree changed: %d entries, precious %q", len(entries), data)
	}
	if _, err := os.Stat(filepath.Join(r.outside, "dir")); err != nil {
		t.Fatalf("the folder outside the tree changed: %v", err)
	}
}

// txDir is the one transaction of the session's bash call.
func (r *forgedRun) txDir(t *testing.T) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(r.dir, ".tiny-agent", "checkpoints", "tx", "0*"))
	if len(dirs) != 1 {
		t.Skipf("no transaction here (overlay refused?): %v", dirs)
	}
	return dirs[0]
}

// refusedOnce checks that stderr says what was refused, on one line.
func refusedOnce(t *testing.T, stderr, want string) {
	t.Helper()
	n := 0
	for l := range strings.SplitSeq(stderr, "\n") {
		if strings.Contains(l, want) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("want one line with %q, got:\n%s", want, stderr)
	}
	t.Logf("refused as wanted:\n%s", stderr)
}

func (r *forgedRun) rewindTurn1(t *testing.T) (int, string) {
	code, out, stderr := r.run("", "session", "rewind", r.id, "--turn", "1", "--files-only")
	return code, out + stderr
}

// Attacks "states-absolute", "states-dotdot", "states-unsealed",
// "kept-original-replaced": a rewind refuses in one line and writes
// nothing outside; a.txt is not given the attacker's content.
func TestForgedTransactionStatesThroughTheBinary(t *testing.T) {
	forEachUser(t, testForgedTransactionStatesThroughTheBinary)
}

func testForgedTransactionStatesThroughTheBinary(t *testing.T, uid int) {
	attacks := map[string]struct {
		forge func(t *testing.T, r *forgedRun, dir string)
		want  string
	}{
		"states-unsealed": {func(t *testing.T, r *forgedRun, dir string) {
			st := readStates(t, dir)
			st["before"] = append(st["before"].([]any), map[string]any{"path": filepath.Join(r.outside, "planted"), "hash": "tx:x/y"})
			writeJSON(t, filepath.Join(dir, "states.json"), st, "")
		}, "its states.json: carries no seal"},
		"states-absolute": {func(t *testing.T, r *forgedRun, dir string) {
			st := readStates(t, dir)
			st["after"] = append(st["after"].([]any), map[string]any{"path": filepath.Join(r.outside, "precious"), "absent": true})
			writeJSON(t, filepath.Join(dir, "states.json"), st, filepath.Base(dir))
		}, "outside the tree"},
		"states-dotdot": {func(t *testing.T, r *forgedRun, dir string) {
			rel, _ := filepath.Rel(r.dir, filepath.Join(r.outside, "dir"))
			st := readStates(t, dir)
			st["before"] = append(st["before"].([]any), map[string]any{"path": rel, "absent": true})
			st["after"] = append(st["after"].([]any), map[string]any{"path": rel, "dir": true})
			writeJSON(t, filepath.Join(dir, "states.json"), st, filepath.Base(dir))
		}, "outside the tree"},
		"kept-original-replaced": {func(t *testing.T, r *forgedRun, dir string) {
			p := filepath.Join(dir, "orig", "a.txt")
			os.Remove(p)
			os.WriteFile(p, []byte("attacker\n"), 0o644)
		}, "was replaced or changed after the apply"},
	}
	for name, a := range attacks {
		t.Run(name, func(t *testing.T) {
			r := newForgedRun(t, uid)
			a.forge(t, r, r.txDir(t))
			code, out := r.rewindTurn1(t)
			refusedOnce(t, out, "refused command transaction")
			if !strings.Contains(out, a.want) || code == 0 {
				t.Fatalf("exit %d, want a refusal naming %q:\n%s", code, a.want, out)
			}
			r.canaryIntact(t)
			if data, _ := os.ReadFile(filepath.Join(r.dir, "a.txt")); string(data) == "attacker\n" {
				t.Fatal("a replaced kept original was restored")
			}
		})
	}
}

func readStates(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "states.json"))
	if err != nil {
		t.Fatal(err)
	}
	data, err = statekey.Open("tx/"+filepath.Base(dir)+"/states.json", data)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// writeJSON writes v, sealed with the tests' key for transaction id when
// id is set: that is more than an attacker has, so the paths themselves
// must be refused.
func writeJSON(t *testing.T, path string, v any, id string) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if id != "" {
		if data, err = statekey.Seal("tx/"+id+"/states.json", data); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Attacks "forged-layers", "forged-pending", "journal-through-symlink"
// at the next start: a planted transaction is refused in one line (once),
// and nothing outside is removed or written.
func TestForgedTransactionAtTheNextStart(t *testing.T) {
	forEachUser(t, testForgedTransactionAtTheNextStart)
}

func testForgedTransactionAtTheNextStart(t *testing.T, uid int) {
	r := newForgedRun(t, uid, providertest.Reply{Text: "again"}, providertest.Reply{Text: "and again"})
	root := filepath.Join(r.dir, ".tiny-agent", "checkpoints", "tx")
	// The markers of the first two are sealed with the tests' key (more
	// than an attacker has), so their layers and journal are what is
	// refused.
	plant := func(id string, files map[string]string) {
		os.MkdirAll(filepath.Join(root, id, "upper"), 0o700)
		os.MkdirAll(filepath.Join(root, id, "work"), 0o700)
		os.WriteFile(filepath.Join(root, id, "start"), nil, 0o600)
		marker := ""
		if id != "forged-pending" {
			marker, _ = statekey.Hex("tx/" + id + "/pending")
		}
		os.MkdirAll(filepath.Join(root, "pending"), 0o700) // journaled turns made none
		os.WriteFile(filepath.Join(root, "pending", id), []byte(marker), 0o600)
		for name, content := range files {
			os.WriteFile(filepath.Join(root, id, name), []byte(content), 0o600)
		}
	}
	plant("forged-layers", map[string]string{"layers": r.outside})
	os.Symlink(r.outside, filepath.Join(r.dir, "out"))
	plant("journal-through-symlink", map[string]string{"journal.json": `{"tree":"` + r.dir + `","changes":[{"path":"out/precious","kind":"delete"}]}`})
	plant("forged-pending", nil)
	os.WriteFile(filepath.Join(root, "forged-pending", "upper", "dropped"), []byte("x"), 0o644)
	_, _, stderr := r.run("", "--session", r.id, "next")
	for id, what := range map[string]string{"forged-layers": "its layers file", "journal-through-symlink": "its journal", "forged-pending": "its pending marker"} {
		refusedOnce(t, stderr, "tiny-go: refused command transaction "+id+": "+what+": ")
	}
	r.canaryIntact(t)
	if _, err := os.Lstat(filepath.Join(r.dir, "dropped")); err == nil {
		t.Fatal("a forged transaction's upper layer was applied")
	}
	_, _, stderr = r.run("", "--session", r.id, "next")
	if strings.Contains(stderr, "refused") {
		t.Fatalf("refused again at the start after:\n%s", stderr)
	}
	r.canaryIntact(t)
}

// Attack "forged-approval": a line appended to approvals.jsonl allows
// nothing; --approval ask asks (and, with no answer, runs nothing), and
// the start says in one line what was refused.
func TestForgedApprovalThroughTheBinary(t *testing.T) {
	forEachUser(t, testForgedApprovalThroughTheBinary)
}

func testForgedApprovalThroughTheBinary(t *testing.T, uid int) {
	r := newForgedRun(t, uid, bashCall(t, "touch pwned"), providertest.Reply{Text: "never"})
	side := filepath.Join(r.dir, ".tiny-agent", "sessions", strings.TrimSuffix(filepath.Base(r.sessions()[0]), ".jsonl")+".d")
	os.MkdirAll(side, 0o700)
	os.WriteFile(filepath.Join(side, "approvals.jsonl"), []byte(`{"allow":[["bash","cmd","touch"]]}`+"\n"), 0o600)
	_, _, stderr := r.run("", "--session", r.id, "--approval", "ask", "go")
	refusedOnce(t, stderr, "refused 1 line(s) of approvals.jsonl")
	if _, err := os.Lstat(filepath.Join(r.dir, "pwned")); err == nil {
		t.Fatalf("a forged approval ran the command unasked:\n%s", stderr)
	}
}

// Attack "integrity-recomputed": another session's line is rewritten
// and its integrity records recomputed without the key; resuming it is
// refused in one line and `session verify` reports it.
func TestRecomputedIntegrityThroughTheBinary(t *testing.T) {
	forEachUser(t, testRecomputedIntegrityThroughTheBinary)
}

func testRecomputedIntegrityThroughTheBinary(t *testing.T, uid int) {
	r := newForgedRun(t, uid)
	path := r.sessions()[0]
	data, _ := os.ReadFile(path)
	forged := bytes.Replace(data, []byte(`"text":"work"`), []byte(`"text":"pwnd"`), 1)
	if bytes.Equal(forged, data) {
		forged = bytes.Replace(data, []byte(`work`), []byte(`pwnd`), 1)
	}
	os.WriteFile(path, forged, 0o600)
	var recs []byte
	for i := range forged {
		if forged[i] == '\n' {
			recs = append(recs, []byte(strings.TrimSpace(recordLine(forged[:i+1])))...)
			recs = append(recs, '\n')
		}
	}
	os.WriteFile(filepath.Join(strings.TrimSuffix(path, ".jsonl")+".d", "integrity"), recs, 0o600)
	code, _, stderr := r.run("", "--session", r.id, "go on")
	if code == 0 {
		t.Fatalf("a forged session was resumed:\n%s", stderr)
	}
	refusedOnce(t, stderr, "UNSEALED")
	_, out, stderr := r.run("", "session", "verify", r.id)
	if !strings.Contains(out+stderr, "UNSEALED") {
		t.Fatalf("verify passed a forged session:\n%s%s", out, stderr)
	}
}

// recordLine is an integrity record as any program can compute it: the
// length and SHA-256 of the prefix, without tiny-go's seal.
func recordLine(prefix []byte) string {
	sum := sha256.Sum256(prefix)
	return fmt.Sprintf("%d %s", len(prefix), hex.EncodeToString(sum[:]))
}

// A forged transaction met first by a rewind (not a start) is a warning
// line of that rewind, which goes on: the forged one was never applied,
// so there is nothing of it to rewind.
func TestForgedTransactionMetByARewind(t *testing.T) {
	forEachUser(t, testForgedTransactionMetByARewind)
}

func testForgedTransactionMetByARewind(t *testing.T, uid int) {
	r := newForgedRun(t, uid)
	root := filepath.Join(r.dir, ".tiny-agent", "checkpoints", "tx")
	os.MkdirAll(filepath.Join(root, "planted", "upper"), 0o700)
	os.WriteFile(filepath.Join(root, "planted", "start"), nil, 0o600)
	os.WriteFile(filepath.Join(root, "planted", "layers"), []byte(r.outside), 0o600)
	marker, _ := statekey.Hex("tx/planted/pending")
	os.MkdirAll(filepath.Join(root, "pending"), 0o700) // journaled turns made none
	os.WriteFile(filepath.Join(root, "pending", "planted"), []byte(marker), 0o600)
	code, out := r.rewindTurn1(t)
	if code != 0 {
		t.Fatalf("the rewind stopped on a forged transaction: %d\n%s", code, out)
	}
	refusedOnce(t, out, "refused command transaction planted: its layers file: ")
	r.canaryIntact(t)
	if data, _ := os.ReadFile(filepath.Join(r.dir, "a.txt")); string(data) != "original\n" {
		t.Fatalf("the rewind did not put a.txt back: %q\n%s", data, out)
	}
}

// Attack "forged-rewind-journal": a planted journal of an "interrupted
// rewind" whose plan deletes a file outside the tree, for the next start
// to finish. It is refused in one line (and moved aside), the start goes
// on, and nothing outside changes.
func TestForgedRewindJournalAtTheNextStart(t *testing.T) {
	forEachUser(t, testForgedRewindJournalAtTheNextStart)
}

func testForgedRewindJournalAtTheNextStart(t *testing.T, uid int) {
	r := newForgedRun(t, uid, providertest.Reply{Text: "again"})
	plan := map[string]any{"id": "forged", "request": map[string]any{"files": true, "force": true},
		"turnInfo": map[string]any{"n": 1},
		"plan": map[string]any{"actions": []any{map[string]any{
			"path": filepath.Join(r.outside, "precious"), "op": "delete",
			"from": map[string]any{"path": filepath.Join(r.outside, "precious"), "hash": "sha256:00"},
			"to":   map[string]any{"path": filepath.Join(r.outside, "precious"), "absent": true}}}}}
	side := strings.TrimSuffix(r.sessions()[0], ".jsonl") + ".d"
	writeJSON(t, filepath.Join(side, "rewind.json"), plan, "")
	code, _, stderr := r.run("", "--session", r.id, "next")
	if code != 0 {
		t.Fatalf("the start stopped on a forged journal: %d\n%s", code, stderr)
	}
	refusedOnce(t, stderr, "refused the journal of an interrupted rewind")
	r.canaryIntact(t)
}

// Attack "index-absolute": records appended to the session's checkpoint
// index, without the key, that make the bash call look as if it created
// a file outside the tree, for a rewind to delete. The rewind says in one
// line that the paths were refused, and the file stays.
func TestForgedIndexThroughTheBinary(t *testing.T) { forEachUser(t, testForgedIndexThroughTheBinary) }

func testForgedIndexThroughTheBinary(t *testing.T, uid int) {
	r := newForgedRun(t, uid)
	side := strings.TrimSuffix(r.sessions()[0], ".jsonl") + ".d"
	index := filepath.Join(side, "checkpoints.jsonl")
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	var first map[string]any
	line, _, _ := bytes.Cut(data, []byte("\n"))
	if err := json.Unmarshal(line, &first); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(r.outside, "precious")
	sum := sha256.Sum256([]byte("keep\n"))
	for _, rec := range []map[string]any{
		{"toolStartedId": first["toolStartedId"], "tool": "write", "phase": "before", "at": 1, "files": []any{map[string]any{"path": target, "absent": true}}},
		{"toolStartedId": first["toolStartedId"], "tool": "write", "phase": "after", "at": 2, "files": []any{map[string]any{"path": target, "hash": "sha256:" + hex.EncodeToString(sum[:]), "mode": 420}}},
	} {
		b, _ := json.Marshal(rec)
		data = append(append(data, b...), '\n')
	}
	os.WriteFile(index, data, 0o600)
	code, out := r.rewindTurn1(t)
	if code != 0 {
		t.Fatalf("rewind: %d\n%s", code, out)
	}
	r.canaryIntact(t)
	if n := strings.Count(out, "carries no seal of tiny-go's key (written before the index was sealed, or planted): its 1 path(s) outside the tree were refused"); n != 2 {
		t.Fatalf("want a line for each planted record, got %d:\n%s", n, out)
	}
}

// A journaled transaction's pending mark planted without tiny-go's key
// (a forged journal that would make a rewind delete a.txt) is refused at
// the next start, in one line, and never turned into states.
func TestForgedJournalAtTheNextStart(t *testing.T) {
	forEachUser(t, func(t *testing.T, uid int) {
		r := newForgedRun(t, uid, providertest.Reply{Text: "again"}, providertest.Reply{Text: "and again"})
		root := filepath.Join(r.dir, ".tiny-agent", "checkpoints", "tx")
		os.MkdirAll(filepath.Join(root, "journal-pending"), 0o700)
		os.MkdirAll(filepath.Join(root, "forged-journal", "journal"), 0o700)
		os.WriteFile(filepath.Join(root, "journal-pending", "forged-journal"), []byte(strings.Repeat("0", 64)+"\n0 0\n"), 0o600)
		os.WriteFile(filepath.Join(root, "forged-journal", "journal", "log"), []byte(`{"op":"absent","path":"`+filepath.Join(r.dir, "a.txt")+`"}`+"\n"), 0o600)
		_, _, stderr := r.run("", "--session", r.id, "next")
		refusedOnce(t, stderr, "tiny-go: refused command transaction forged-journal: its pending marker: ")
		if _, err := os.Lstat(filepath.Join(root, "forged-journal", "states.json")); err == nil {
			t.Fatal("the forged journal was turned into states")
		}
		_, _, stderr = r.run("", "--session", r.id, "next")
		if strings.Contains(stderr, "refused") {
			t.Fatalf("refused again at the start after:\n%s", stderr)
		}
	})
}
