package attacks

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// secret is the API key tiny-go runs with: an attack that finds it in
// tiny-go's environment or memory prints ESCAPED (tiny-go scrubs the key
// itself from every result, so the suite never looks for it there).
const secret = "attack-secret-0123456789abcdef"

// env is what an attack's command and checks know of the run.
type env struct {
	work    string // the working directory (the tree)
	outside string // a directory outside every writable root, writable by the user
	home    string // the user's HOME (its state key beneath)
	uid     int
}

// attack is one row of the suite: a command the model could type into
// bash, and what tells that it was held.
type attack struct {
	name string
	// cmd is a bash command; $A is the attacker program, $OUT the
	// directory outside the writable roots.
	cmd string
	// want must all appear in the command's result ("%UID%" is replaced
	// by the user's id); rootWant too when the user is root.
	want, rootWant []string
	// Nothing of the result may contain ESCAPED, nor any of deny.
	deny []string
	// check looks at the world after the run (files outside the tree).
	check func(env) error
	// bg runs cmd as a bg command instead (its output is read from a
	// file it writes under the temporary directory).
	bg bool
	// needsNS: only the namespaces hold it (the overlay, the read-only
	// .tiny-agent); where the kernel refuses them tiny-go says so at
	// start, and the row is left out (see namespaced).
	needsNS bool
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds tiny-go and the attacker once, into a directory every
// user can read.
func binaries(t *testing.T) (tinyGo, attacker string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "tiny-go-attacks-bin-")
		if buildErr != nil {
			return
		}
		os.Chmod(binDir, 0o755)
		for _, b := range [][2]string{{"tiny-go", "../../cmd/tiny-go"}, {"attacker", "./attacker"}} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, b[0]), b[1])
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	tinyGo = filepath.Join(binDir, "tiny-go")
	// Another build to attack (an older one, to see the suite catch what
	// it let out), readable by every user.
	if bin := os.Getenv("TINY_ATTACKS_TINYGO"); bin != "" {
		tinyGo = bin
	}
	return tinyGo, filepath.Join(binDir, "attacker")
}

// userDirs makes the tree, the home and the outside directory of a run
// as uid, with what the attacks expect to find in the tree.
func userDirs(t *testing.T, uid int) (work, home, outside string) {
	t.Helper()
	base, err := os.MkdirTemp("", "tiny-go-attacks-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	outside, err = os.MkdirTemp("/var/tmp", "tiny-go-attacks-out-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	work, home = filepath.Join(base, "work"), filepath.Join(base, "home")
	for _, d := range []string{work, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "real.txt"), []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{base, work, home, outside, filepath.Join(work, "real.txt")} {
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(base, 0o755)
	// Planted by someone else: a setuid-root program and a device node
	// (a copy of /dev/null) in the tree.
	plant := exec.Command("sh", "-c", "cp \"$(command -v grep)\" suid-grep && chmod 4755 suid-grep && mknod -m 666 nulldev c 1 3")
	plant.Dir = work
	if out, err := plant.CombinedOutput(); err != nil {
		t.Fatalf("planting: %v %s", err, out)
	}
	return work, home, outside
}

// namespaced reports whether tiny-go, run as uid, starts commands in
// namespaces (a run without tool calls: its warning says when not).
func namespaced(t *testing.T, uid int) bool {
	t.Helper()
	_, stderr, _ := runAttacks(t, uid, nil)
	return !strings.Contains(stderr, "no namespaces for commands")
}

// runAttacks runs every attack as a bash call of one tiny-go run (the
// real binary, in one-shot mode against the scripted model) as uid, and
// returns each call's result by attack name, and tiny-go's stderr.
func runAttacks(t *testing.T, uid int, list []attack) (map[string]string, string, env) {
	t.Helper()
	tinyGo, attacker := binaries(t)
	work, home, outside := userDirs(t, uid)
	bgDir, err := os.MkdirTemp("", "tiny-go-attacks-bg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bgDir) })
	os.Chown(bgDir, uid, uid)
	srv := providertest.New(t)
	calls := toolCalls(list, "A="+attacker+" OUT="+outside+"\n", bgDir)
	if len(calls) > 0 {
		srv.Enqueue(providertest.Reply{ToolCalls: calls})
	}
	srv.Enqueue(providertest.Reply{Text: "done"})
	args := []string{"--cwd", work, "--max-tool-calls", "200", "attack"}
	cmd := exec.Command(tinyGo, args...)
	testenv.AsUser(cmd, uid)
	cmd.Dir = work
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + home, "TMPDIR=/tmp",
		"OPENROUTER_API_KEY=" + secret, "OTEL_SDK_DISABLED=true", "TINY_ENDPOINT=" + srv.URL()}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tiny-go: %v\n%s", err, stderr.String())
	}
	reqs := srv.Requests()
	results := map[string]string{}
	for i, a := range list {
		if b, err := os.ReadFile(filepath.Join(bgDir, strconv.Itoa(i))); a.bg && err == nil {
			results[a.name] = string(b)
		}
	}
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		if m.Role != "tool" || m.Content == nil {
			continue
		}
		i, err := strconv.Atoi(strings.TrimPrefix(m.ToolCallID, "a"))
		if err == nil && i < len(list) && !list[i].bg {
			results[list[i].name] = *m.Content
		}
	}
	return results, stderr.String(), env{work: work, outside: outside, home: home, uid: uid}
}

// toolCalls are the calls of the model's one reply: a bash call per
// attack, or a bg start whose command writes its result to bgDir/<i>
// and then a bash call that waits for every such result.
func toolCalls(list []attack, prefix, bgDir string) []providertest.ToolCall {
	var calls []providertest.ToolCall
	call := func(id, tool, args string) {
		calls = append(calls, providertest.ToolCall{ID: id, Name: tool, Arguments: args})
	}
	wait := ""
	for i, a := range list {
		id := "a" + strconv.Itoa(i)
		if !a.bg {
			call(id, "bash", `{"command":`+strconv.Quote(prefix+a.cmd)+`}`)
			continue
		}
		res := filepath.Join(bgDir, strconv.Itoa(i))
		cmd := prefix + "{\n" + a.cmd + "\n} > " + res + ".tmp 2>&1; mv " + res + ".tmp " + res
		call(id, "bg", `{"action":"start","command":`+strconv.Quote(cmd)+`}`)
		wait += " " + res
	}
	if wait != "" {
		call("wait", "bash", `{"command":`+strconv.Quote("for f in"+wait+"; do i=0; while [ ! -e $f ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; done")+`}`)
	}
	return calls
}

// assertHeld fails for every attack whose result or check shows an
// escape, naming it; it reports whether all were held.
func assertHeld(t *testing.T, list []attack, results map[string]string, e env) bool {
	t.Helper()
	escapes := 0
	for _, a := range list {
		out, ok := results[a.name]
		var why []string
		if !ok {
			why = append(why, "no result")
		}
		want := a.want
		if e.uid == 0 {
			want = append(append([]string(nil), want...), a.rootWant...)
		}
		for _, w := range want {
			if w = strings.ReplaceAll(w, "%UID%", strconv.Itoa(e.uid)); !strings.Contains(out, w) {
				why = append(why, fmt.Sprintf("missing %q", w))
			}
		}
		for _, d := range append([]string{"ESCAPED"}, a.deny...) {
			if strings.Contains(out, d) {
				why = append(why, fmt.Sprintf("result has %q", d))
			}
		}
		if a.check != nil {
			if err := a.check(e); err != nil {
				why = append(why, err.Error())
			}
		}
		if len(why) > 0 {
			escapes++
			t.Errorf("attack %q got out: %s\nresult:\n%s", a.name, strings.Join(why, "; "), out)
		}
	}
	t.Logf("%d attacks as uid %d, %d escapes", len(list), e.uid, escapes)
	return escapes == 0
}
