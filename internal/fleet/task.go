// Package fleet runs agent tasks and eval suites on Temporal workers: a
// workflow fans tasks out as activities; each activity runs tiny-go as a
// subprocess in its own workspace and keeps the session and the
// workspace durable in a blob store, so that a retried attempt on another
// worker resumes where the dead one stopped (docs/fleet.md).
package fleet

import (
	"fmt"
	"regexp"
	"time"

	"github.com/tiny-agent/tiny-go/internal/eval"
)

// Names registered with Temporal.
const (
	SuiteWorkflowName = "tiny-go.suite"
	BatchWorkflowName = "tiny-go.batch"
	RunTaskName       = "tiny-go.task"
	LoadTasksName     = "tiny-go.load-tasks"
	ProgressQuery     = "progress"
	DefaultTaskQueue  = "tiny-go"
	DefaultNamespace  = "default"
)

// Error types of the retry policy: a task that fails with one of them is
// not tried again.
const (
	ErrConfiguration  = "ConfigurationError"
	ErrBudgetExceeded = "BudgetExceeded"
)

// Task is one agent job: a prompt, where its workspace comes from, and
// its settings.
type Task struct {
	// Key is unique within the suite and names the task's folder in the
	// blob store; Name and Rep are the eval task and repeat.
	Key    string `json:"key"`
	Name   string `json:"name"`
	Rep    int    `json:"rep"`
	Prompt string `json:"prompt,omitzero"`
	Source Source `json:"source"`
	Settings
}

// Source is the workspace a task starts from: exactly one is set.
type Source struct {
	// Git and Commit: a repository URL and the commit to check out.
	Git    string `json:"git,omitzero"`
	Commit string `json:"commit,omitzero"`
	// Tarball is the blob key of a .tar.gz of the workspace.
	Tarball string `json:"tarball,omitzero"`
	// EvalTask is the blob key of a .tar.gz of an eval task folder
	// (prompt.txt, fixture/, test.sh); its test.sh decides the result.
	EvalTask string `json:"evalTask,omitzero"`
}

// Settings are how the agent runs.
type Settings struct {
	Model    string `json:"model,omitzero"`
	Endpoint string `json:"endpoint,omitzero"`
	Provider string `json:"provider,omitzero"`
	// Sandbox is tiny-go's --sandbox value ("" for its default).
	Sandbox string `json:"sandbox,omitzero"`
	// Approval is tiny-go's --approval mode: auto ("", the default) or
	// plan (read-only: the agent plans and changes nothing). ask is
	// refused at submission, as nobody is there to answer; hooks in the
	// workspace's .claude/settings.json still guard every call.
	Approval string `json:"approval,omitzero"`
	// Args are extra tiny-go flags (an eval task's args.txt).
	Args []string `json:"args,omitzero"`
	// Budget: time per attempt, tokens and US dollars over all attempts
	// (0: no limit).
	Timeout     time.Duration `json:"timeout"`
	TestTimeout time.Duration `json:"testTimeout,omitzero"`
	MaxTokens   int64         `json:"maxTokens,omitzero"`
	MaxCostUSD  float64       `json:"maxCostUSD,omitzero"`
	// HeartbeatTimeout is how soon a dead worker's task moves on.
	HeartbeatTimeout time.Duration `json:"heartbeatTimeout,omitzero"`
	// MaxAttempts bounds the attempts of a task (0: 5).
	MaxAttempts int `json:"maxAttempts,omitzero"`
}

// Suite is the input of the suite workflow.
type Suite struct {
	// Run names the suite's folder in the blob store.
	Run     string    `json:"run"`
	Started time.Time `json:"started"`
	Model   string    `json:"model,omitzero"`
	Repeat  int       `json:"repeat"`
	Names   []string  `json:"names"`
	Tasks   []Task    `json:"tasks"`
	// A big suite keeps its tasks in the blob store (TasksKey, a JSON
	// array of Total tasks) and runs them in child workflows of Batch
	// tasks each, so that no workflow's history grows with the suite.
	TasksKey string `json:"tasksKey,omitzero"`
	Total    int    `json:"total,omitzero"`
	Batch    int    `json:"batch,omitzero"`
}

// Size is the number of tasks of the suite.
func (s Suite) Size() int {
	if s.TasksKey != "" {
		return s.Total
	}
	return len(s.Tasks)
}

// Result is one finished task: the eval run (attempts and workers
// included) and where its artifacts are.
type Result struct {
	eval.RunResult
	// Outcome is the session's last operation outcome.
	Outcome string `json:"outcome,omitzero"`
	// Session, Sidecar and Diff are blob keys of the final session, its
	// sidecar folder (.tar.gz) and the workspace diff.
	Session string `json:"session,omitzero"`
	Sidecar string `json:"sidecar,omitzero"`
	Diff    string `json:"diff,omitzero"`
	// Uploads and UploadBytes count the blob writes of the last attempt,
	// UploadMs their time.
	Uploads     int   `json:"uploads,omitzero"`
	UploadBytes int64 `json:"uploadBytes,omitzero"`
	UploadMs    int64 `json:"uploadMs,omitzero"`
}

// Progress is what the progress query answers: the results so far, or,
// for a suite run in batches, the batches' workflow ids, each of which
// answers the query with its own results.
type Progress struct {
	Total   int      `json:"total"`
	Results []Result `json:"results"`
	Batches []string `json:"batches,omitzero"`
	Batch   int      `json:"batch,omitzero"` // tasks per batch
}

var unsafeKey = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// TaskKey is a blob-safe key for the repeat rep of the task name.
func TaskKey(name string, rep int) string {
	return fmt.Sprintf("%s-%d", unsafeKey.ReplaceAllString(name, "_"), rep)
}

// check refuses settings no worker can carry out, in one line.
func (s Settings) check() error {
	switch s.Approval {
	case "", "auto", "plan":
		return nil
	case "ask":
		return usage("--approval ask: nobody is there to answer on a worker; use auto or plan, and guard calls with the sandbox or PreToolUse hooks")
	}
	return usage("--approval %q: use auto or plan", s.Approval)
}
