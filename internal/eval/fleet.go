package eval

import (
	"bytes"
	"context"
	"io"
	"time"
)

// The pieces a fleet worker (internal/fleet) needs to run one task the way
// Run does, on a machine that only has the task folder.

// Input returns the task's prompt, extra tiny-go flags (args.txt) and the
// absolute path of its test.sh.
func (t Task) Input() (prompt string, args []string, test string, err error) {
	in, err := t.read()
	return in.prompt, in.args, in.test, err
}

// SetUp copies the task's fixture into repo as a fresh git repository
// with one commit, and outside/ into root.
func SetUp(t Task, root, repo string) error {
	return setUp(t, root, repo, StableEnv())
}

// FixtureGitConfig is fixtureGitConfig for the fleet, which makes
// repositories of its sources the same way.
func FixtureGitConfig(command string) []string { return fixtureGitConfig(command) }

// StableEnv is the environment that makes commands print the same from
// run to run (fixed git identities and dates, C locale, UTC).
func StableEnv() []string { return (&Config{}).stableEnv() }

// SessionFile is the one session of repo ("" when there is none).
func SessionFile(repo string) (string, error) { return sessionFile(repo) }

// ReadMetrics reduces a session file and counts what it records.
func ReadMetrics(path string) (Metrics, error) { return readMetrics(path) }

// RunTest runs script (test.sh) in repo with env and its own time limit.
func RunTest(ctx context.Context, env []string, timeout time.Duration, script, root, repo string) (exit int, out string, timedOut bool, err error) {
	cfg := Config{Env: env, TestTimeout: timeout}
	return cfg.runTest(ctx, script, root, repo)
}

// TailWriter keeps the last n bytes written to it in buf (a command's
// stderr for a one-line error).
func TailWriter(buf *bytes.Buffer, n int) io.Writer { return &limitedTail{buf: buf, n: n} }

// NewReport groups runs by task, in the order of names, into a report.
func NewReport(started time.Time, wall time.Duration, model string, repeat, parallel int, names []string, runs []RunResult) *Report {
	rep := &Report{Version: ReportVersion, Started: started.UTC().Format(time.RFC3339), WallMs: wall.Milliseconds(),
		Mode: ModeLive, Model: model, Repeat: repeat, Parallel: parallel}
	for _, name := range names {
		var mine []RunResult
		for _, r := range runs {
			if r.Task == name {
				mine = append(mine, r)
			}
		}
		if len(mine) > 0 {
			rep.Tasks = append(rep.Tasks, summarize(name, mine))
		}
	}
	return rep
}

// ProgressLine is the line Run prints when a run ends, "[n/total] PASS …".
func ProgressLine(n, total, repeat int, r RunResult) string {
	var b lineBuffer
	cfg := Config{Repeat: repeat, Progress: &b}
	cfg.progress(n, total, r)
	return string(b)
}

type lineBuffer []byte

func (b *lineBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
