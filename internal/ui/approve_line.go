package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/approval"
)

// Approval questions without the terminal UI: in line mode the next input
// line answers, and before (or without) any UI AskLine reads the answer
// from the input stream itself. An answer is "y", "a", "n" optionally
// followed by a reason ("n not on main"), or "esc" (or the Esc key) to
// abort the operation.

// ErrAborted is AskLine's answer when the user asked to abort the
// operation; the caller aborts it.
var ErrAborted = errors.New("the user aborted the operation")

// questionLines are a question as plain text.
func questionLines(p approval.Prompt) []string {
	lines := append([]string{promptHeader(p)}, promptDetail(p, false)...)
	return append(lines, "Allow? "+lineChoices(p)+": ")
}

func lineChoices(p approval.Prompt) string {
	s := "y = once"
	if p.Always != "" {
		s += ", a = always allow " + sanitizeLine(p.Always)
	}
	return s + ", n [reason] = deny, esc = abort"
}

// parseAnswer reads one answer line; ok is false for anything else.
func parseAnswer(line string) (a approval.Answer, abort, ok bool) {
	line = strings.TrimSpace(line)
	word, rest, _ := strings.Cut(line, " ")
	switch strings.ToLower(strings.TrimRight(word, ":,")) {
	case "y", "yes":
		return approval.Answer{Choice: approval.Once}, false, rest == ""
	case "a", "always":
		return approval.Answer{Choice: approval.Always}, false, rest == ""
	case "n", "no":
		return approval.Answer{Choice: approval.Deny, Reason: strings.TrimSpace(rest)}, false, true
	case "esc", "\x1b":
		return approval.Answer{}, true, true
	}
	if strings.HasPrefix(line, "\x1b") {
		return approval.Answer{}, true, true
	}
	return approval.Answer{}, false, false
}

func (p *linePrinter) printQuestion(msg approvalMsg) {
	lines := questionLines(msg.prompt)
	p.mu.Lock()
	p.endLineLocked()
	p.write(strings.Join(lines, "\n"))
	p.midLine = true
	p.mu.Unlock()
	// One question at a time: the agent waits for its answer.
	drainApprovals(p.approvals)
	p.approvals <- msg
}

func drainApprovals(ch chan approvalMsg) {
	select {
	case <-ch:
	default:
	}
}

// answers is where the answer to asked comes from: the input lines while a
// question waits, nothing otherwise.
func (r *lineRunner) answers(asked *approvalMsg) <-chan input {
	if asked == nil {
		return nil
	}
	return r.inputs
}

// answerLine answers asked with one input line (ok false: end of input,
// which aborts) and reports whether the question is settled.
func (r *lineRunner) answerLine(ctx context.Context, asked *approvalMsg, in input, ok bool) bool {
	r.pr.endLine()
	if !ok || in.err != nil {
		r.abort(ctx)
		return true
	}
	a, abort, valid := parseAnswer(in.text)
	switch {
	case abort:
		r.abort(ctx)
		return true
	case !valid:
		r.pr.println("Answer y, a, n [reason] or esc.")
		r.pr.mu.Lock()
		r.pr.write("Allow? " + lineChoices(asked.prompt) + ": ")
		r.pr.midLine = true
		r.pr.mu.Unlock()
		return false
	}
	if a.Choice == approval.Always && asked.prompt.Always == "" {
		a.Choice = approval.Once
	}
	asked.reply <- a
	return true
}

// AskLine puts p to the user on out and reads the answer from in, for
// when no UI runs (recovery before the UI starts, one-shot mode with
// --approval ask). It returns ErrAborted for esc, and ctx's error when ctx
// ends first. An unreadable or ended input is an error: the call stays
// unanswered and unrun.
func AskLine(ctx context.Context, in io.Reader, out io.Writer, p approval.Prompt) (approval.Answer, error) {
	fmt.Fprint(out, strings.Join(questionLines(p), "\n"))
	for {
		line, err := readLine(ctx, in)
		if err != nil {
			fmt.Fprintln(out)
			if ctx.Err() != nil {
				return approval.Answer{}, ctx.Err()
			}
			return approval.Answer{}, fmt.Errorf("no answer to the approval question: %w", err)
		}
		a, abort, ok := parseAnswer(line)
		switch {
		case abort:
			return approval.Answer{}, ErrAborted
		case ok:
			if a.Choice == approval.Always && p.Always == "" {
				a.Choice = approval.Once
			}
			return a, nil
		}
		fmt.Fprint(out, "Answer y, a, n [reason] or esc: ")
	}
}

// readLine reads up to a newline, a byte at a time so that nothing after
// it is consumed (the UI or the next question reads on). On a file (a
// terminal, a pipe) it polls, so an abort ends the wait without leaving a
// reader behind that would steal the UI's input.
func readLine(ctx context.Context, in io.Reader) (string, error) {
	f, isFile := in.(*os.File)
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if isFile {
			fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, int((100 * time.Millisecond).Milliseconds()))
			if err != nil && !errors.Is(err, unix.EINTR) {
				return "", err
			}
			if n == 0 || errors.Is(err, unix.EINTR) {
				continue
			}
		}
		n, err := in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return strings.TrimSuffix(b.String(), "\r"), nil
			}
			b.WriteByte(buf[0])
			if b.Len() > 64<<10 {
				return "", errors.New("answer line too long")
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) && b.Len() > 0 {
				return b.String(), nil
			}
			return "", err
		}
	}
}
