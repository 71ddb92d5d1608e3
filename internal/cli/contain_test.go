package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// SIGKILL of tiny-go while a bash command runs that has left processes
// behind in every way a shell can, and a bg process is running: 2 s after
// the kill, before any resume, none of them is left, even under a
// subreaper that would otherwise keep every orphan alive.
func TestSIGKILLLeavesNoSurvivors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills tiny-go")
	}
	if !namespaced(t) {
		t.Skip("no PID namespaces here: survivors are reaped at the next start instead (TestProcessesStayDead)")
	}
	styles := map[string]func(secs string) string{
		"setsid":                        func(s string) string { return "setsid sleep " + s + " >/dev/null 2>&1 &" },
		"nohup":                         func(s string) string { return "nohup sleep " + s + " >/dev/null 2>&1 &" },
		"double fork":                   func(s string) string { return "(sleep " + s + " >/dev/null 2>&1 &)" },
		"disown":                        func(s string) string { return "sleep " + s + " >/dev/null 2>&1 & disown" },
		"env -i setsid":                 func(s string) string { return "env -i setsid sleep " + s + " >/dev/null 2>&1 &" },
		"env -i setsid sh -c 'sleep &'": func(s string) string { return "env -i setsid sh -c 'sleep " + s + " &' >/dev/null 2>&1" },
	}
	escapees := map[string]escapee{}
	var script []string
	for name, start := range styles {
		e := newEscapee()
		escapees[name] = e
		script = append(script, start(e.secs))
	}
	bg := newEscapee()
	escapees["bg process"] = bg
	// Markers a running command writes lie outside the working directory:
	// its writes there reach the tree only when it ends (the overlay).
	marks := t.TempDir()
	script = append(script, "touch "+marks+"/ready; sleep 60")

	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{
			toolCall("c1", "bg", mustJSON(t, map[string]string{"action": "start", "command": "sleep " + bg.secs})),
			toolCall("c2", "bash", mustJSON(t, map[string]string{"command": strings.Join(script, "\n")})),
		}},
		providertest.Reply{Text: "never"},
	)
	t.Cleanup(func() {
		for _, e := range escapees {
			if pid := e.pid(); pid != 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	k := startKeeper(t, program(t, dir, srv, "escape"))
	if !waitForPath(filepath.Join(marks, "ready"), 15*time.Second) {
		log, _ := os.ReadFile(k.cmd.Stderr.(*os.File).Name())
		t.Fatalf("the command never got going:\n%s", log)
	}
	for name, e := range escapees {
		if !e.appeared() {
			t.Fatalf("%s: did not start", name)
		}
	}
	if err := syscall.Kill(k.child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	var survivors []string
	for name, e := range escapees {
		if e.alive() {
			survivors = append(survivors, name)
		}
	}
	if len(survivors) > 0 {
		t.Fatalf("survived the SIGKILL of tiny-go by 2 s: %v", survivors)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tiny-agent")); err != nil {
		t.Fatal(err)
	}
}

func waitForPath(p string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(p); err == nil {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
