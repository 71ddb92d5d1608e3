package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Issue 42's workload table: each command side by side with plain bash in
// the same run, journaled (the default) and, for the record, over the
// overlay. The command's own time is measured inside its shell (the
// journal's cost is its trapped calls); the turn's, less a turn running
// `true`, adds what tiny-go does around it (the init, the states).

type workload struct {
	short, name string
	seed        string // run once
	prep        string // run before every timed run, untimed ("" for none)
	command     string
	keptMax     int64         // what the transaction may keep
	addedMax    time.Duration // over plain bash, the turn less a turn running true (0: ratio only)
	ratioMax    float64       // the command's time journaled over plain bash (0: none)
}

var workloads = []workload{
	{short: "append", name: "append to a 1 GB file", seed: `truncate -s 1G big.log`, command: `echo line >> big.log`, keptMax: 10 << 20, addedMax: 50 * time.Millisecond},
	{short: "sqlite-select", name: "read-only query of a 500 MB SQLite database", seed: sqliteSeed, command: `sqlite3 app.db "select count(*) from t"`, keptMax: 16 << 10, addedMax: 50 * time.Millisecond},
	{short: "sqlite-update", name: "update of one row of it", seed: sqliteSeed, command: `sqlite3 app.db "update t set x=randomblob(100000) where rowid=2500"`, keptMax: 1 << 20, addedMax: 200 * time.Millisecond},
	{short: "mv", name: "rename of a 500 MB directory of 50 files", seed: `mkdir data && for i in $(seq 50); do head -c 10485760 /dev/urandom > data/f$i; done`, prep: `[ -d data ] || mv data2 data`, command: `mv data data2`, keptMax: 1 << 20, ratioMax: 1.2},
	{short: "git", name: "git add and commit of 200 changed files in a 2,000-file repository", seed: gitSeed, prep: `for i in $(seq 200); do echo $RANDOM >> src/f$i.txt; done`, command: `git add -A && git commit -qm change`, keptMax: 8 << 20, ratioMax: 1.2},
	{short: "go", name: "go build of a module of 20 packages (its cache warm)", seed: goSeed, prep: `echo "// $RANDOM" >> p1/p.go`, command: `go build -o /dev/null ./...`, keptMax: 1 << 20, ratioMax: 1.2},
	{short: "make", name: "make of 300 targets", seed: makeSeed, prep: `make -s clean`, command: `make -s -j2`, keptMax: 1 << 20, ratioMax: 1.2},
	{short: "npm", name: "npm install of a local package", seed: npmSeed, prep: `rm -rf node_modules package-lock.json`, command: `npm install --offline --no-audit --no-fund ./dep-1.0.0.tgz >/dev/null`, keptMax: 1 << 20, ratioMax: 1.2},
	{short: "pip", name: "pip install of a local wheel into a venv", seed: pipSeed, prep: `venv/bin/pip uninstall -q -y demo >/dev/null 2>&1; true`, command: `venv/bin/pip install -q --no-index demo-1.0-py3-none-any.whl`, keptMax: 8 << 20, ratioMax: 1.2},
}

// pipSeed makes a venv and a wheel by hand (no setuptools needed).
const pipSeed = `python3 -m venv venv && python3 -c '
import zipfile
with zipfile.ZipFile("demo-1.0-py3-none-any.whl", "w") as z:
    z.writestr("demo/__init__.py", "x = 1\n")
    z.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    z.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("demo-1.0.dist-info/RECORD", "")
'`

const gitSeed = `git init -q -b main . && git config user.email t@t && git config user.name t && mkdir src &&
for i in $(seq 2000); do echo $i > src/f$i.txt; done && echo .tiny-agent/ > .gitignore && git add -A && git commit -qm seed`

const goSeed = `printf 'module example.com/m\n\ngo 1.22\n' > go.mod && for i in $(seq 20); do mkdir p$i &&
printf 'package p%d\n\nimport "strings"\n\nfunc F(s string) string { return strings.ToUpper(s) }\n' $i > p$i/p.go; done && go build ./...`

const makeSeed = `mkdir src && for i in $(seq 300); do echo $i > src/f$i.in; done &&
printf 'OUT := $(patsubst src/%%.in,out/%%.o,$(wildcard src/*.in))\nall: $(OUT)\nout/%%.o: src/%%.in\n\t@mkdir -p out && tr 0-9 a-j < $< > $@\nclean:\n\trm -rf out\n' > Makefile`

const npmSeed = `mkdir dep && printf '{"name":"dep","version":"1.0.0","main":"index.js"}' > dep/package.json &&
for i in $(seq 100); do echo "module.exports.f$i = $i" >> dep/index.js; done && (cd dep && npm pack -q >/dev/null) && mv dep/dep-1.0.0.tgz . &&
printf '{"name":"app","version":"1.0.0"}' > package.json`

// workloadRun is one workload's figures, medians of its runs.
type workloadRun struct {
	plainCmd, journaledCmd time.Duration // the command itself, timed in its shell
	plainTurn, added       time.Duration // plain bash's wall time; the turn over a turn running true
	kept                   int64
}

var nsLine = regexp.MustCompile(`NS (\d+)`)

// timedCommand wraps a command so that its shell says how long it took.
func timedCommand(c string) string {
	return `s=$(date +%s%N); ` + c + `; r=$?; e=$(date +%s%N); echo "NS $((e-s))"; exit $r`
}

func measureWorkload(tb testing.TB, w workload, tx string, runs int) workloadRun {
	dir := filepath.Join(tb.TempDir(), "work")
	os.Mkdir(dir, 0o755)
	bashIn(tb, dir, w.seed)
	var plainCmd, jCmd, plain, turns, bases []time.Duration
	for range runs {
		if w.prep != "" {
			bashIn(tb, dir, w.prep)
		}
		t0 := time.Now()
		out := bashIn(tb, dir, timedCommand(w.command))
		plain = append(plain, time.Since(t0))
		plainCmd = append(plainCmd, nsOf(tb, out))
	}
	kept := int64(0)
	for range runs {
		if w.prep != "" {
			bashIn(tb, dir, w.prep)
		}
		os.RemoveAll(filepath.Join(dir, ".tiny-agent"))
		bases = append(bases, workloadTurn(tb, dir, "true", tx).took)
		if w.prep != "" {
			bashIn(tb, dir, w.prep)
		}
		before := treeBytes(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx"))
		t := workloadTurn(tb, dir, timedCommand(w.command), tx)
		turns = append(turns, t.took)
		jCmd = append(jCmd, nsOf(tb, t.result))
		kept = max(kept, treeBytes(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx"))-before)
	}
	return workloadRun{plainCmd: median(plainCmd), journaledCmd: median(jCmd), plainTurn: median(plain), added: median(turns) - median(bases), kept: kept}
}

func bashIn(tb testing.TB, dir, script string) string {
	tb.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

func nsOf(tb testing.TB, out string) time.Duration {
	tb.Helper()
	m := nsLine.FindStringSubmatch(out)
	if m == nil {
		tb.Fatalf("no timing in:\n%s", out)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return time.Duration(n)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

type turnOut struct {
	took   time.Duration
	result string
}

// workloadTurn is a one-shot turn whose one bash call runs command.
func workloadTurn(tb testing.TB, dir, command, tx string) turnOut {
	tb.Helper()
	srv := providertest.New(tb,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", fmt.Sprintf("{\"command\":%q}", command))}},
		providertest.Reply{Text: "done"},
	)
	env := map[string]string{"OPENROUTER_API_KEY": "k", "OTEL_SDK_DISABLED": "true", "TINY_ENDPOINT": srv.URL(), "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), "TINY_TX": tx}
	var out, errb strings.Builder
	t0 := time.Now()
	if code := Main([]string{"--cwd", dir, "go"}, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] }); code != 0 {
		tb.Fatalf("exit %d: %s", code, errb.String())
	}
	took := time.Since(t0)
	reqs := srv.Requests()
	return turnOut{took: took, result: fmt.Sprint(reqs[len(reqs)-1].Chat.Messages)}
}

// TestJournalWorkloadTable runs the table journaled, side by side with
// plain bash, and holds each workload to what it keeps exactly (issue
// 42's targets), and to its time within a margin that only a regression
// passes on a shared 2-core machine (medians of three runs): the
// command's own time within twice the target ratio plus 25 ms, a big
// file's turn within its target plus 150 ms. The figures against the
// targets themselves are BenchmarkJournalWorkloads' (docs/checkpoints.md).
func TestJournalWorkloadTable(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 1.5 GB and runs 54 turns")
	}
	for _, w := range workloads {
		t.Run(w.short, func(t *testing.T) {
			r := measureWorkload(t, w, "journal", 3)
			t.Logf("%s: plain bash %v (the command %v); journaled, the command %v (%.2f×), the turn +%v over one running true; kept %d kB",
				w.name, r.plainTurn.Round(time.Millisecond), r.plainCmd.Round(100*time.Microsecond), r.journaledCmd.Round(100*time.Microsecond),
				float64(r.journaledCmd)/float64(r.plainCmd), r.added.Round(time.Millisecond), r.kept>>10)
			if r.kept > w.keptMax {
				t.Errorf("kept %d bytes, more than %d", r.kept, w.keptMax)
			}
			if w.ratioMax > 0 && r.journaledCmd > time.Duration(2*w.ratioMax*float64(r.plainCmd))+25*time.Millisecond {
				t.Errorf("the command took %v journaled, %v in plain bash: more than %.1f× (+25 ms)", r.journaledCmd, r.plainCmd, 2*w.ratioMax)
			}
			if w.addedMax > 0 && r.added > w.addedMax+150*time.Millisecond {
				t.Errorf("the turn took %v more than one running true: more than %v (+150 ms)", r.added, w.addedMax)
			}
		})
	}
}

// BenchmarkJournalWorkloads logs the table for docs/checkpoints.md:
// journaled and over the overlay, five runs each.
func BenchmarkJournalWorkloads(b *testing.B) {
	for _, w := range workloads {
		for _, tx := range []string{"journal", "overlay"} {
			b.Run(w.short+"/"+tx, func(b *testing.B) {
				for range b.N {
					r := measureWorkload(b, w, tx, 5)
					b.Logf("%s (%s): plain bash %v (the command %v); the command %v (%.2f×), the turn +%v over one running true; kept %.1f MB",
						w.name, tx, r.plainTurn.Round(time.Millisecond), r.plainCmd.Round(100*time.Microsecond), r.journaledCmd.Round(100*time.Microsecond),
						float64(r.journaledCmd)/float64(r.plainCmd), r.added.Round(time.Millisecond), float64(r.kept)/1e6)
				}
			})
		}
	}
}
