package fleet

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/tiny-agent/tiny-go/internal/eval"
)

// Conn is where the fleet is: the Temporal service and the blob store.
type Conn struct {
	HostPort, Namespace, TaskQueue, Blob string
	Identity                             string
	// TLS dials with TLS (implied by an API key or a client certificate);
	// APIKey is a Temporal Cloud API key; CertFile and KeyFile a client
	// certificate for mTLS.
	TLS               bool
	APIKey            string
	CertFile, KeyFile string
}

func (c Conn) dial() (client.Client, error) {
	if c.HostPort == "" {
		return nil, errors.New("--temporal HOST:PORT is required")
	}
	opts := client.Options{HostPort: c.HostPort, Namespace: firstString(c.Namespace, DefaultNamespace),
		Identity: c.Identity, Logger: quietLogger{}}
	if c.TLS || c.APIKey != "" || c.CertFile != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if c.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts.ConnectionOptions.TLS = cfg
	}
	if c.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	cl, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (is the server running? --temporal HOST:PORT): %w", c.HostPort, err)
	}
	return cl, nil
}

// SubmitSuite uploads the eval task folders to the blob store and starts
// the suite workflow; it returns the workflow id.
func SubmitSuite(ctx context.Context, c Conn, tasks []eval.Task, repeat int, settings Settings, model string) (string, error) {
	return c.submit(ctx, "eval", "the suite", func(blobs *Blobs, id string, started time.Time) (Suite, error) {
		s := Suite{Run: id, Started: started, Model: model, Repeat: repeat}
		for _, t := range tasks {
			if _, _, _, err := t.Input(); err != nil {
				return s, fmt.Errorf("%s: %w", t.Name, err)
			}
			tree, err := packDir(t.Dir, nil)
			if err != nil {
				return s, err
			}
			key, err := putContent(ctx, blobs, tree)
			if err != nil {
				return s, err
			}
			s.Names = append(s.Names, t.Name)
			for r := 1; r <= repeat; r++ {
				s.Tasks = append(s.Tasks, Task{Key: TaskKey(t.Name, r), Name: t.Name, Rep: r, Source: Source{EvalTask: key}, Settings: settings})
			}
		}
		return s, batch(ctx, blobs, &s)
	})
}

// DefaultBatch is the number of tasks beyond which a suite runs in child
// workflows of that many tasks ($TINY_FLEET_BATCH overrides it).
const DefaultBatch = 200

// batch moves a big suite's tasks to the blob store: the workflow's
// input stays small (Temporal refuses a payload over 2 MB) and the suite
// runs in batches (runBatches).
func batch(ctx context.Context, blobs *Blobs, s *Suite) error {
	n := DefaultBatch
	if v, err := strconv.Atoi(os.Getenv("TINY_FLEET_BATCH")); err == nil && v > 0 {
		n = v
	}
	if len(s.Tasks) <= n {
		return nil
	}
	b, err := json.Marshal(s.Tasks)
	if err != nil {
		return err
	}
	key, err := putContent(ctx, blobs, b)
	if err != nil {
		return err
	}
	s.TasksKey, s.Total, s.Batch, s.Tasks = key, len(s.Tasks), n, nil
	return nil
}

// SubmitJob packs dir (or uses t.Source as given), starts a one-task
// suite and returns its workflow id.
func SubmitJob(ctx context.Context, c Conn, t Task, dir string) (string, error) {
	return c.submit(ctx, "run", "the job", func(blobs *Blobs, id string, started time.Time) (Suite, error) {
		if t.Source.Git == "" {
			tree, err := packDir(dir, func(rel string) bool { return rel == ".tiny-agent" })
			if err != nil {
				return Suite{}, err
			}
			if t.Source.Tarball, err = putContent(ctx, blobs, tree); err != nil {
				return Suite{}, err
			}
		}
		t.Key, t.Name, t.Rep = "job-1", "job", 1
		return Suite{Run: id, Started: started, Model: t.Model, Repeat: 1, Names: []string{t.Name}, Tasks: []Task{t}}, nil
	})
}

// submit opens the blob store and the Temporal client, names the run
// tiny-go-<kind>-<time>, lets build upload its inputs and describe the
// suite, and starts the suite workflow; it returns the workflow id.
func (c Conn) submit(ctx context.Context, kind, what string, build func(blobs *Blobs, id string, started time.Time) (Suite, error)) (string, error) {
	blobs, err := OpenBlobs(ctx, c.Blob)
	if err != nil {
		return "", err
	}
	defer blobs.Close()
	cl, err := c.dial()
	if err != nil {
		return "", err
	}
	defer cl.Close()
	started := time.Now()
	id := fmt.Sprintf("tiny-go-%s-%s", kind, started.UTC().Format("20060102T150405.000Z"))
	s, err := build(blobs, id, started)
	if err != nil {
		return "", err
	}
	if _, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: firstString(c.TaskQueue, DefaultTaskQueue)}, SuiteWorkflowName, s); err != nil {
		return "", fmt.Errorf("start %s: %w", what, err)
	}
	return id, nil
}

// Watch follows the suite id: each result is passed to onResult as it
// arrives (once), until the suite ends or, when wait is false, after the
// current results. It returns the suite's input and the results.
func Watch(ctx context.Context, c Conn, id string, wait bool, onResult func(n, total, repeat int, r Result), poll func()) (Suite, []Result, bool, error) {
	cl, err := c.dial()
	if err != nil {
		return Suite{}, nil, false, err
	}
	defer cl.Close()
	s, err := suiteInput(ctx, cl, id)
	if err != nil {
		return s, nil, false, err
	}
	// Results in order of arrival within each batch (one batch for a
	// suite run in one workflow), each passed on once.
	var batches [][]Result
	n := 0
	next := 0
	report := func(p Progress, limit int) []Result {
		got := [][]Result{p.Results}
		if len(p.Batches) > 0 {
			got = batchResults(ctx, cl, p, batches, limit, &next)
		}
		var all []Result
		for i, rs := range got {
			if i == len(batches) {
				batches = append(batches, nil)
			}
			for _, r := range rs[len(batches[i]):] {
				n++
				onResult(n, p.Total, s.Repeat, r)
			}
			batches[i] = rs
			all = append(all, rs...)
		}
		return all
	}
	run := cl.GetWorkflow(ctx, id, "")
	done := make(chan error, 1)
	var final Progress
	go func() { done <- run.Get(ctx, &final) }()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return s, nil, true, fmt.Errorf("suite %s: %w", id, err)
			}
			return s, report(final, 0), true, nil
		case <-tick.C:
			v, err := cl.QueryWorkflow(ctx, id, "", ProgressQuery)
			var p Progress
			if err == nil && v.Get(&p) == nil {
				limit := queriesPerPoll
				if !wait {
					limit = 0 // one answer, complete
				}
				all := report(p, limit)
				if !wait {
					return s, all, false, nil
				}
			}
			if poll != nil {
				poll()
			}
		case <-ctx.Done():
			return s, nil, false, ctx.Err()
		}
	}
}

// queriesPerPoll bounds the batches asked for results per poll (every
// 0.5 s) while a suite runs.
const queriesPerPoll = 5

// batchResults asks the batches of a suite for their results, at most
// limit of them (0: all) from *next on, round robin, so that watching a
// suite of any size costs a few queries a second; the others keep what
// have holds. A finished batch answers too, replayed by a worker
// (Temporal queries closed workflows); one whose every result is in have
// is not asked again, one that does not answer keeps what it had.
func batchResults(ctx context.Context, cl client.Client, p Progress, have [][]Result, limit int, next *int) [][]Result {
	out := make([][]Result, len(p.Batches))
	copy(out, have)
	asked := 0
	for k := range p.Batches {
		i := (*next + k) % len(p.Batches)
		if len(out[i]) == min(p.Batch, p.Total-i*p.Batch) {
			continue
		}
		if limit > 0 && asked == limit {
			*next = i
			return out
		}
		asked++
		v, err := cl.QueryWorkflow(ctx, p.Batches[i], "", ProgressQuery)
		var got Progress
		if err == nil && v.Get(&got) == nil && len(got.Results) >= len(out[i]) {
			out[i] = got.Results
		}
	}
	return out
}

// suiteInput reads the suite's input back from the workflow's history.
func suiteInput(ctx context.Context, cl client.Client, id string) (Suite, error) {
	var s Suite
	it := cl.GetWorkflowHistory(ctx, id, "", false, 0)
	if !it.HasNext() {
		return s, fmt.Errorf("no workflow %s", id)
	}
	ev, err := it.Next()
	if err != nil {
		return s, fmt.Errorf("workflow %s: %w", id, err)
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil || attrs.GetWorkflowType().GetName() != SuiteWorkflowName {
		return s, fmt.Errorf("workflow %s is not a tiny-go suite", id)
	}
	if err := defaultConverter().FromPayloads(attrs.GetInput(), &s); err != nil {
		return s, fmt.Errorf("workflow %s: %w", id, err)
	}
	return s, nil
}

// Cancel asks the suite to stop: each running task aborts durably (Esc).
func Cancel(ctx context.Context, c Conn, id string) error {
	cl, err := c.dial()
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.CancelWorkflow(ctx, id, "")
}

// Report builds the eval report of a suite's results.
func Report(s Suite, results []Result, workers int) *eval.Report {
	runs := make([]eval.RunResult, len(results))
	for i, r := range results {
		runs[i] = r.RunResult
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Rep < runs[j].Rep })
	return eval.NewReport(s.Started, time.Since(s.Started), s.Model, s.Repeat, workers, s.Names, runs)
}

// StreamEvents copies the --json events of the job's attempts to w, from
// offset on; it returns the new offsets per attempt.
func StreamEvents(ctx context.Context, blobs *Blobs, runID string, sent map[int]int, w io.Writer) error {
	for attempt := 1; attempt <= 20; attempt++ {
		data, ok, err := blobs.Get(ctx, fmt.Sprintf("runs/%s/job-1/events-%d.jsonl", unsafeKey.ReplaceAllString(runID, "_"), attempt))
		if err != nil {
			return err
		}
		if !ok {
			if attempt > len(sent) {
				return nil
			}
			continue
		}
		if n := sent[attempt]; len(data) > n {
			end := strings.LastIndexByte(string(data), '\n') + 1
			if end > n {
				if _, err := w.Write(data[n:end]); err != nil {
					return err
				}
				sent[attempt] = end
			}
		}
	}
	return nil
}

func firstString(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// writeFile writes data to path through a temporary file.
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tiny-go-*")
	if err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// putContent stores data under its hash (once: a suite submitted again
// uploads only the task folders that changed, and the workers' cached
// bases, keyed by it, stay valid) and returns its key.
func putContent(ctx context.Context, blobs *Blobs, data []byte) (string, error) {
	cs := &contentStore{blobs: blobs}
	h := sha(data)
	return casKey(h), cs.put(ctx, h, data)
}
