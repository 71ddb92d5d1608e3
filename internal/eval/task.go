// Package eval runs coding tasks against tiny-go and measures the result:
// each task is a folder with prompt.txt, fixture/ and test.sh (the layout
// of tiny-agent's eval tasks). A run copies the fixture into a fresh git
// repository, runs tiny-go on the prompt in its own process, runs test.sh
// there (exit 0 is a pass) and reduces the session file to requests,
// tokens, tool calls, compactions, aborts and retries.
//
// Model exchanges can be recorded (--record) and replayed offline
// (--replay) at the HTTP level, so every provider is covered and a replay
// fails at the first request that differs from the recording.
package eval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Files of a task folder.
const (
	promptFile  = "prompt.txt"
	fixtureDir  = "fixture"
	testFile    = "test.sh"
	argsFile    = "args.txt"
	outsideDir  = "outside"
	repoDirName = "repo"
)

// Task is one task folder.
type Task struct {
	Name string // the folder's name; recordings are named after it
	Dir  string // absolute path of the folder
}

// isTask reports whether dir looks like a task: it has any of the files a
// task has, so that a task missing one of them is reported, not skipped.
func isTask(dir string) bool {
	for _, f := range []string{promptFile, testFile, fixtureDir} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// LoadTasks resolves the arguments of `tiny-go eval`: each is a task
// folder, or a folder whose subfolders that look like tasks are run (in
// name order). Two tasks with the same name are an error, since their
// recordings would collide.
func LoadTasks(args []string) ([]Task, error) {
	var tasks []Task
	seen := map[string]string{}
	add := func(dir string) error {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		name := filepath.Base(abs)
		if prev, ok := seen[name]; ok {
			if prev == abs {
				return nil
			}
			return fmt.Errorf("two tasks are named %s (%s and %s)", name, prev, abs)
		}
		seen[name] = abs
		tasks = append(tasks, Task{Name: name, Dir: abs})
		return nil
	}
	for _, arg := range args {
		fi, err := os.Stat(arg)
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("eval: %s is not a folder", arg)
		}
		if isTask(arg) {
			if err := add(arg); err != nil {
				return nil, err
			}
			continue
		}
		entries, err := os.ReadDir(arg)
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		found := false
		for _, e := range entries {
			sub := filepath.Join(arg, e.Name())
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && isTask(sub) {
				found = true
				if err := add(sub); err != nil {
					return nil, err
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("eval: %s holds no task (a folder with %s, %s/ and %s)", arg, promptFile, fixtureDir, testFile)
		}
	}
	return tasks, nil
}

// taskInput is what a run needs from the task folder.
type taskInput struct {
	prompt string
	args   []string // extra tiny-go flags from args.txt
	test   string   // absolute path of test.sh
}

// read checks the task folder and reads its prompt and flags. The error
// says what is missing.
func (t Task) read() (taskInput, error) {
	var in taskInput
	var missing []string
	prompt, err := os.ReadFile(filepath.Join(t.Dir, promptFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		missing = append(missing, promptFile)
	case err != nil:
		return in, err
	case strings.TrimSpace(string(prompt)) == "":
		return in, fmt.Errorf("%s is empty", promptFile)
	}
	if fi, err := os.Stat(filepath.Join(t.Dir, fixtureDir)); err != nil || !fi.IsDir() {
		missing = append(missing, fixtureDir+"/")
	}
	in.test = filepath.Join(t.Dir, testFile)
	if fi, err := os.Stat(in.test); err != nil || !fi.Mode().IsRegular() {
		missing = append(missing, testFile)
	}
	if len(missing) > 0 {
		return in, fmt.Errorf("task folder has no %s", strings.Join(missing, ", "))
	}
	in.prompt = strings.TrimRight(string(prompt), "\n")
	args, err := os.ReadFile(filepath.Join(t.Dir, argsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return in, err
	}
	for _, line := range strings.Split(string(args), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			in.args = append(in.args, line)
		}
	}
	for _, a := range in.args {
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains([]string{"--cwd", "--json", "--session", "--continue"}, name) {
			return in, fmt.Errorf("%s: %s is set by the eval itself", argsFile, name)
		}
	}
	return in, nil
}
