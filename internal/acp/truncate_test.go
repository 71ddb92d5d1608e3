package acp_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/store/storetest"
)

// truncate cuts the file at path to size with coreutils' truncate:
// another program, as a user's script would.
func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if out, err := exec.Command("truncate", "-s", strconv.FormatInt(size, 10), path).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v %s", err, out)
	}
}

// maps reports whether pid maps the file at path.
func maps(t *testing.T, pid int, path string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), path)
}

// stopped stops pid (SIGSTOP) and waits until each of its threads is.
func stopped(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	tasks := "/proc/" + strconv.Itoa(pid) + "/task"
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		ids, err := os.ReadDir(tasks)
		if err != nil {
			t.Fatal(err)
		}
		all := true
		for _, id := range ids {
			st, err := os.ReadFile(tasks + "/" + id.Name() + "/stat")
			if err != nil {
				continue // the thread ended
			}
			// The state follows the command, which is in parentheses.
			if f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:])); len(f) == 0 || f[0] != "T" {
				all = false
				break
			}
		}
		if all {
			return
		}
	}
	t.Fatal("the agent did not stop")
}

// A session file cut short by another program while the agent reads it
// (session/load; the agent is stopped while it has the file mapped, the
// file is truncated, the agent goes on): the load fails with one line
// that says what happened and what to do, the agent lives on and serves
// the next request, and it wrote nothing to the file.
func TestSessionTruncatedDuringLoad(t *testing.T) {
	srv := providertest.New(t)
	dir := t.TempDir()
	paths := storetest.InstallGenerated(t, dir, 3, 20000)
	p := startAgent(t, srv, dir)
	p.initialize()
	pid := p.cmd.Process.Pid
	for _, path := range paths {
		id := storetest.SessionID(path)
		req := p.sendCall("session/load", map[string]any{"sessionId": id, "cwd": dir, "mcpServers": []any{}})
		caught := false
		// Until the agent is caught with the file mapped, or the load has
		// had time enough to end (then the next session).
		for try := 0; !caught && try < 1000; try++ {
			stopped(t, pid)
			if caught = maps(t, pid, path); caught {
				truncate(t, path, 4096)
			}
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
		}
		resp, _ := p.await(req)
		if !caught || resp["error"] == nil {
			// Read whole before it was caught (or caught between the
			// end of the pass and the unmap): the next session.
			p.call("session/close", map[string]any{"sessionId": id})
			continue
		}
		msg := dump(resp["error"])
		t.Logf("caught loading %s (%d bytes): %s", id, size(t, paths[len(paths)-1]), msg)
		if !strings.Contains(msg, "session "+id+" changed under tiny-go (truncated by another program") || !strings.Contains(msg, "tiny-go session verify "+id) {
			t.Fatalf("session/load of the truncated session: %s", dump(resp))
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != 4096 {
			t.Fatalf("the agent changed the file: %v %v", fi.Size(), err)
		}
		// The agent goes on.
		if resp, _ := p.call("session/list", map[string]any{"cwd": dir}); resp["error"] != nil {
			t.Fatalf("session/list after the failed load: %s", dump(resp))
		}
		p.newSession()
		return
	}
	t.Fatal("every load ended before the agent was caught with the file mapped")
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A session file cut short by another program between two turns: the
// agent holds no mapping of it, so nothing faults; the next prompt is
// refused with the line that says the file was truncated (nothing is
// written to it), and the agent serves the next request.
func TestSessionTruncatedBetweenTurns(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "First answer."})
	dir := t.TempDir()
	path := storetest.InstallGenerated(t, dir, 1, 3000)[0]
	id := storetest.SessionID(path)
	p := startAgent(t, srv, dir)
	p.initialize()
	if resp, _ := p.call("session/load", map[string]any{"sessionId": id, "cwd": dir, "mcpServers": []any{}}); resp["error"] != nil {
		t.Fatalf("session/load: %s", dump(resp))
	}
	resp, notes := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "go on"}}})
	if resp["error"] != nil || answerText(notes) != "First answer." {
		t.Fatalf("first prompt: %s %q", dump(resp), answerText(notes))
	}
	cut := size(t, path) / 2
	truncate(t, path, cut)

	resp, _ = p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "and now?"}}})
	msg := dump(resp)
	t.Logf("second prompt: %s", msg)
	if !strings.Contains(msg, "was truncated to "+strconv.FormatInt(cut, 10)+" bytes") {
		t.Fatalf("second prompt after the truncation: %s", msg)
	}
	// What to do is the store's advice; loading the cut session is not it.
	if strings.Contains(msg, "to resume") || !strings.Contains(msg, "fork the session or start a new one") {
		t.Fatalf("the refusal advises the wrong thing: %s", msg)
	}
	if got := size(t, path); got != cut {
		t.Fatalf("the agent wrote to the truncated file: %d bytes, cut to %d", got, cut)
	}
	if resp, _ := p.call("session/list", map[string]any{"cwd": dir}); resp["error"] != nil {
		t.Fatalf("session/list after the refused prompt: %s", dump(resp))
	}
	p.newSession()
}
