package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// bg log tails (tools.md).
const (
	bgStatusLines = 40
	bgLogsLines   = 80
)

// bgTool is the built-in bg. Its outputs, by action:
//
//	start   Started background process <id> (pid <pid>).
//	        Log: <log path>
//	list    one line per record, oldest first:
//	        <id>  <state>  pid <pid>  started <RFC 3339 time>  <command>
//	        or "No background processes." (with status: "... with status <s>.")
//	status  id/state/pid/command/cwd/started[/ended]/log lines, a blank line,
//	        then "Last 40 log lines:" and the lines, or "(log is empty)"
//	logs    the last lines of the log (80 by default, tail up to 2000, at
//	        most 50KB), then "[Showing the last K lines of the log. Full
//	        log: <path>]" when earlier lines exist; "(log is empty)" if empty
//	stop    "Stopped <id> (pid <pid>) with SIGTERM." or "... with SIGKILL
//	        after 2 seconds." or, when it was not running, "Background
//	        process <id> is not running: <state>." (for stale: "... nothing
//	        was signalled.")
//
// <state> is running, exited (code N), stopped or stale. An unknown id is
// the error "No background process with id <id>.".
type bgTool struct {
	m *Manager
}

func (bgTool) Definition() Definition {
	return Definition{
		Name: "bg",
		Description: "Manage background processes that outlive one tool call, such as servers and watchers. " +
			"action=start runs command with sh -c, detached, with its output appended to a log file, and returns its id. " +
			"action=list shows all background processes (optionally only those with the given status). " +
			"action=status shows one process and the last 40 lines of its log. " +
			"action=logs shows the last lines of its log (tail lines, default 80, at most 2000). " +
			"action=stop terminates it (SIGTERM, then SIGKILL after 2 seconds). " +
			"Processes started in this session are stopped when tiny-go exits.",
		Parameters: jsontext.Value(`{"type":"object","properties":{` +
			`"action":{"type":"string","enum":["start","list","status","logs","stop"],"description":"What to do."},` +
			`"command":{"type":"string","description":"Shell command to start (action=start)."},` +
			`"id":{"type":"string","description":"Id of the background process (status, logs, stop)."},` +
			`"tail":{"type":"integer","minimum":1,"description":"Number of log lines to show (action=logs; default 80, at most 2000)."},` +
			`"status":{"type":"string","enum":["running","exited","stopped","stale"],"description":"Only list processes with this status (action=list)."}` +
			`},"required":["action"]}`),
	}
}

func (bgTool) Replay() Replay { return Replay{Policy: ReplayNever, Key: "builtin:bg:v1"} }

func (t bgTool) Run(ctx context.Context, args jsontext.Value) Result {
	var a struct {
		Action  jsontext.Value `json:"action"`
		Command jsontext.Value `json:"command"`
		ID      jsontext.Value `json:"id"`
		Tail    jsontext.Value `json:"tail"`
		Status  jsontext.Value `json:"status"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return errorResult(err)
	}
	action, err := nonEmptyString("action", a.Action)
	if err != nil {
		return errorResult(err)
	}
	tail, err := optionalCount("tail", a.Tail, bgLogsLines)
	if err != nil {
		return errorResult(err)
	}
	var text string
	switch action {
	case "start":
		var command string
		if command, err = nonEmptyString("command", a.Command); err == nil {
			text, err = t.start(command)
		}
	case "list":
		filter := ""
		if !absent(a.Status) {
			filter, err = statusFilter(a.Status)
		}
		if err == nil {
			text, err = t.list(filter)
		}
	case "status", "logs", "stop":
		var id string
		if id, err = nonEmptyString("id", a.ID); err != nil {
			break
		}
		switch action {
		case "status":
			text, err = t.status(id)
		case "logs":
			text, err = t.logs(id, min(tail, MaxOutputLines))
		default:
			text, err = t.stop(ctx, id)
		}
	default:
		err = toolError("action must be one of start, list, status, logs, stop")
	}
	if err != nil {
		var te toolError
		var np errNoProcess
		if !errors.As(err, &te) && !errors.As(err, &np) {
			err = fmt.Errorf("bg %s failed: %w", action, err)
		}
		return errorResult(err)
	}
	return Result{Content: text}
}

// statusFilter validates the list filter.
func statusFilter(v jsontext.Value) (string, error) {
	s, _ := stringValue(v)
	switch s {
	case BgRunning, BgExited, BgStopped, BgStale:
		return s, nil
	}
	return "", toolError("status must be one of running, exited, stopped, stale")
}

func (t bgTool) start(command string) (string, error) {
	rec, err := t.m.start(command)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Started background process %s (pid %d).\nLog: %s", rec.ID, rec.PID, rec.Log), nil
}

func (t bgTool) list(filter string) (string, error) {
	recs, bad, err := t.m.records()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, rec := range recs {
		rec, state := t.m.liveState(rec)
		if filter != "" && state != filter {
			continue
		}
		fmt.Fprintf(&b, "%s  %s  pid %d  started %s  %s\n", rec.ID, describeState(rec, state), rec.PID,
			rec.StartedAt.Format(time.RFC3339), shortCommand(rec.Command))
	}
	if bad > 0 {
		fmt.Fprintf(&b, "(%d unreadable record(s) in %s skipped)\n", bad, t.m.dir)
	}
	if b.Len() == 0 {
		if filter != "" {
			return fmt.Sprintf("No background processes with status %s.", filter), nil
		}
		return "No background processes.", nil
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// shortCommand is the first line of command, at most 80 characters.
func shortCommand(command string) string {
	first, _, multi := strings.Cut(command, "\n")
	if r := []rune(first); len(r) > 80 {
		return string(r[:79]) + "…"
	} else if multi {
		return first + " …"
	}
	return first
}

func (t bgTool) status(id string) (string, error) {
	rec, err := t.m.load(id)
	if err != nil {
		return "", err
	}
	rec, state := t.m.liveState(rec)
	var b strings.Builder
	fmt.Fprintf(&b, "id: %s\nstatus: %s\npid: %d\ncommand: %s\ncwd: %s\nstarted: %s\n",
		rec.ID, describeState(rec, state), rec.PID, rec.Command, rec.Dir, rec.StartedAt.Format(time.RFC3339))
	if rec.EndedAt != nil {
		fmt.Fprintf(&b, "ended: %s\n", rec.EndedAt.Format(time.RFC3339))
	}
	if t.m.leftovers(rec) {
		b.WriteString("note: processes it put in the background are still running; stop ends them\n")
	}
	fmt.Fprintf(&b, "log: %s\n\n", rec.Log)
	lines, shown, err := logTail(rec.Log, bgStatusLines)
	switch {
	case err != nil:
		fmt.Fprintf(&b, "(log unreadable: %v)", err)
	case lines == "":
		b.WriteString("(log is empty)")
	default:
		fmt.Fprintf(&b, "Last %d log lines:\n%s", shown.lines, lines)
	}
	return b.String(), nil
}

func (t bgTool) logs(id string, n int) (string, error) {
	rec, err := t.m.load(id)
	if err != nil {
		return "", err
	}
	lines, shown, err := logTail(rec.Log, n)
	if err != nil {
		return "", err
	}
	if lines == "" {
		return "(log is empty)", nil
	}
	if shown.more {
		lines += fmt.Sprintf("\n\n[Showing the last %d lines of the log. Full log: %s]", shown.lines, rec.Log)
	}
	return lines, nil
}

func (t bgTool) stop(ctx context.Context, id string) (string, error) {
	rec, err := t.m.load(id)
	if err != nil {
		return "", err
	}
	rec, state, outcome := t.m.stop(ctx, rec)
	switch outcome {
	case stopTerminated:
		return fmt.Sprintf("Stopped %s (pid %d) with SIGTERM.", id, rec.PID), nil
	case stopKilled:
		return fmt.Sprintf("Stopped %s (pid %d) with SIGKILL after %d seconds.", id, rec.PID, int(bgStopGrace/time.Second)), nil
	}
	if state == BgStale {
		return fmt.Sprintf("Background process %s is not running: stale (pid %d no longer belongs to it); nothing was signalled.", id, rec.PID), nil
	}
	return fmt.Sprintf("Background process %s is not running: %s.", id, describeState(rec, state)), nil
}

// tailShown describes what logTail returned.
type tailShown struct {
	lines int  // lines returned
	more  bool // the log has earlier content
}

// logTail returns the last n lines of the log at path, within
// MaxOutputBytes, reading only the end of the file.
func logTail(path string, n int) (string, tailShown, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", tailShown{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", tailShown{}, err
	}
	// One byte more than the limit shows whether the window starts on a line.
	window := int64(MaxOutputBytes + 1)
	from := max(fi.Size()-window, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil {
		return "", tailShown{}, err
	}
	cut := from > 0
	if cut {
		// Drop the line the window starts inside, unless it is all there is.
		if i := bytes.IndexByte(data, '\n'); i >= 0 && i < len(data)-1 {
			data = data[i+1:]
		}
	}
	tb := NewTailBuffer(n, MaxOutputBytes)
	tb.Write(data)
	tail := tb.Tail()
	shown := tailShown{lines: int(tail.TotalLines - tail.FirstLine + 1), more: cut || tail.Truncated}
	if tail.FirstLine == 0 {
		shown.lines = 0
	}
	return strings.ToValidUTF8(string(tail.Text), "\uFFFD"), shown, nil
}
