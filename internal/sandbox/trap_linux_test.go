//go:build amd64 || arm64

package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/journal"
	"github.com/tiny-agent/tiny-go/internal/netproxy"
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// trapped runs script with bash in dir through StartTrapped, journaled
// by journal.Attach into jdir for tree, and returns its output.
func trapped(t *testing.T, s *Sandbox, tree, dir, jdir, script string) string {
	t.Helper()
	filter, err := journal.Filter()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	l, err := s.StartTrapped(cmd, filter)
	if err != nil {
		t.Fatalf("StartTrapped: %v\n%s", err, out.String())
	}
	sup, err := journal.Attach(l, tree, jdir, journal.Options{Exclude: s.JournalExclude(tree), Writable: s.MayWrite})
	if err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	if err := sup.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("%s: %v\n%s", script, werr, out.String())
	return out.String()
}

func trapSandbox(t *testing.T, p Policy) *Sandbox {
	t.Helper()
	requireLandlock(t)
	s := newSandbox(t, p)
	if err := s.TrapRefusal(); err != nil {
		t.Skipf("no namespaces: %v", err)
	}
	checkInit(t, s)
	return s
}

// treeState is every name under root but .tiny-agent: kind, mode,
// inode, times and content.
func treeState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".tiny-agent" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		e := fmt.Sprintf("%v ino=%d mtime=%d", info.Mode(), st.Ino, st.Mtim.Nano())
		if info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			e += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[strings.TrimPrefix(p, root)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// A command started trapped, in its own PID and mount namespaces, is
// journaled as on the host (the listener's pids are tiny-go's, its cwd
// and dirfds name the same paths) and Restore gives the tree back.
func TestTrappedCommandIsRewound(t *testing.T) { forEachInit(t, testTrappedCommandIsRewound) }

func testTrappedCommandIsRewound(t *testing.T) {
	l := newLayout(t)
	s := trapSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	writeFile(t, filepath.Join(l.work, "f"), "f\n", 0o644)
	writeFile(t, filepath.Join(l.work, "d/x"), "x", 0o644)
	writeFile(t, filepath.Join(l.work, "g"), "g", 0o644)
	writeFile(t, filepath.Join(l.work, "h/a/b"), "b", 0o644)
	writeFile(t, filepath.Join(l.work, "big"), strings.Repeat("z", 2<<20), 0o644)
	before := treeState(t, l.work)
	jdir := filepath.Join(l.work, ".tiny-agent", "journal")
	out := trapped(t, s, l.work, l.work, jdir, `echo x >> f; mv d d2; rm g; echo y > new; rm -r h
cd d2 && echo in > sub; cd ..; printf ABC | dd of=big conv=notrunc bs=1 seek=5 status=none; echo pid=$$`)
	if !strings.Contains(out, "pid=1") {
		t.Errorf("the command is not PID 1 of its namespace: %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(l.work, "d2/sub")); string(b) != "in\n" {
		t.Fatalf("the command did not run as written: d2/sub = %q", b)
	}
	if err := journal.Restore(jdir); err != nil {
		t.Fatal(err)
	}
	after := treeState(t, l.work)
	for p, w := range before {
		if after[p] != w {
			t.Errorf("%s after Restore: %q, want %q", p, after[p], w)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s left after Restore", p)
		}
	}
}

// An in-place open of a big file the command may not write fails as it
// would untrapped (never a band fd opened with tiny-go's rights): outside
// the writable roots (Landlock), and a file of mode 0444 (no capability
// overrides it, root's neither).
func TestTrappedBandGrantsNoWrite(t *testing.T) { forEachInit(t, testTrappedBandGrantsNoWrite) }

func testTrappedBandGrantsNoWrite(t *testing.T) {
	l := newLayout(t)
	s := trapSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	big := strings.Repeat("q", 2<<20)
	outside, readOnly := filepath.Join(l.outside, "big"), filepath.Join(l.work, "ro.bin")
	writeFile(t, outside, big, 0o666)
	writeFile(t, readOnly, big, 0o444)
	files := []string{outside, readOnly}
	if os.Geteuid() == 0 {
		// Writable by its owner only, another uid.
		other := filepath.Join(l.work, "other.bin")
		writeFile(t, other, big, 0o644)
		if err := os.Chown(other, 1234, 1234); err != nil {
			t.Fatal(err)
		}
		files = append(files, other)
	}
	base := filepath.Dir(l.work) // a tree holding them all
	jdir := filepath.Join(l.work, ".tiny-agent", "journal")
	out := trapped(t, s, base, l.work, jdir, fmt.Sprintf(`for f in %s; do
  if exec 3<>"$f"; then printf X >&3 && echo "wrote $f"; exec 3>&-; fi
done`, strings.Join(files, " ")))
	for _, p := range files {
		if b, _ := os.ReadFile(p); string(b) != big {
			t.Errorf("%s was written", p)
		}
		if strings.Contains(out, "wrote "+p) {
			t.Errorf("the command wrote %s", p)
		}
	}
	if strings.Count(out, "Permission denied")+strings.Count(out, "Read-only") < len(files) {
		t.Errorf("want every open refused: %q", out)
	}
}

// The journal removes an empty directory itself (rmdir, a rename onto
// one), so that Restore gives the same inode back: never one the command
// may not remove. In read-only mode (Landlock), and, as root, from a
// folder another uid owns (the command has no capability).
func TestTrappedRmdirGrantsNoRemoval(t *testing.T) { forEachInit(t, testTrappedRmdirGrantsNoRemoval) }

func testTrappedRmdirGrantsNoRemoval(t *testing.T) {
	l := newLayout(t)
	for _, d := range []string{"empty", "target", "src", "owned/empty"} {
		if err := os.MkdirAll(filepath.Join(l.work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	jdir := filepath.Join(l.work, ".tiny-agent", "journal")
	ro := trapSandbox(t, Policy{Mode: ReadOnly, WorkDir: l.work, Getenv: l.getenv})
	trapped(t, ro, l.work, l.work, jdir+"1", `rmdir empty; mv -T src target; rmdir empty target`)
	for _, d := range []string{"empty", "target", "src"} {
		if !exists(filepath.Join(l.work, d)) {
			t.Errorf("read-only mode: %s was removed", d)
		}
	}
	if os.Geteuid() != 0 {
		return
	}
	if err := os.Chown(filepath.Join(l.work, "owned"), 1234, 1234); err != nil {
		t.Fatal(err)
	}
	ws := trapSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	trapped(t, ws, l.work, l.work, jdir+"2", `rmdir owned/empty; mv -T src owned/empty`)
	if !exists(filepath.Join(l.work, "owned/empty")) || !exists(filepath.Join(l.work, "src")) {
		t.Error("a folder another uid owns lost its empty folder")
	}
}

// Nothing of a hidden file, of the state key or of .tiny-agent reaches the
// journal, whatever the command does to their names (truncate, open in
// place, remove, through a link), and they stay as they were.
func TestTrappedJournalKeepsNothingHidden(t *testing.T) {
	forEachInit(t, testTrappedJournalKeepsNothingHidden)
}

func testTrappedJournalKeepsNothingHidden(t *testing.T) {
	l := newLayout(t)
	keyDir := filepath.Join(l.home, "key")
	writeFile(t, filepath.Join(keyDir, "key"), "KEY=s3cr3t-key", 0o600)
	t.Setenv(statekey.EnvDir, keyDir)
	secret := filepath.Join(l.work, ".env")
	secretDir := filepath.Join(l.work, "secrets")
	bigSecret := "s3cr3t-big" + strings.Repeat("s", 2<<20)
	writeFile(t, secret, "TOKEN=s3cr3t-env", 0o600)
	writeFile(t, filepath.Join(secretDir, "big"), bigSecret, 0o600)
	writeFile(t, filepath.Join(l.work, ".tiny-agent", "state"), "s3cr3t-state", 0o600)
	other := filepath.Join(l.work, "other")
	writeFile(t, other, "its own", 0o600)
	if os.Geteuid() == 0 { // the command, without capabilities, cannot read it
		writeFile(t, other, "s3cr3t-other", 0o600)
		if err := os.Chown(other, 1234, 1234); err != nil {
			t.Fatal(err)
		}
	}
	s := trapSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv,
		Hidden: func() []string { return []string{secret, secretDir} }})
	if !s.Hides() {
		t.Skip("no namespaces to hide paths")
	}
	jdir := filepath.Join(l.work, ".tiny-agent", "journal")
	trapped(t, s, l.work, l.work, jdir, fmt.Sprintf(`echo > .env; exec 3<>secrets/big; printf X >&3; exec 3>&-
echo > secrets/big; rm -f .env secrets/big; rm -rf secrets
ln -s %[1]s/key keylink; echo > keylink; rm -f %[1]s/key; ln -s secrets sl; echo > sl/big; rm -f sl/big
echo > other; exec 3<>other; chmod 666 other; truncate -s 0 other
echo > .tiny-agent/state; rm -f .tiny-agent/state; ln -s .tiny-agent ta; echo > ta/state; rm -f ta/state; true`, keyDir))
	for _, p := range journalHolding(t, jdir, "s3cr3t") {
		t.Errorf("the journal's %s holds a secret", p)
	}
	if b, _ := os.ReadFile(other); os.Geteuid() == 0 && string(b) != "s3cr3t-other" {
		t.Errorf("%s, another uid's, changed: %q", other, b)
	}
	for p, want := range map[string]string{secret: "TOKEN=s3cr3t-env", filepath.Join(secretDir, "big"): bigSecret,
		filepath.Join(keyDir, "key"): "KEY=s3cr3t-key", filepath.Join(l.work, ".tiny-agent", "state"): "s3cr3t-state"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s changed: %v, %.30q", p, err, b)
		}
	}
}

// journalHolding lists the files of the journal in jdir, and the records
// of its log (a small pre-image is inline, base64 in the JSON), that
// hold secret.
func journalHolding(t *testing.T, jdir, secret string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(jdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(secret)) {
			found = append(found, p)
		}
		for i, line := range bytes.Split(b, []byte("\n")) {
			var r struct{ Inline []byte }
			if json.Unmarshal(line, &r) == nil && bytes.Contains(r.Inline, []byte(secret)) {
				found = append(found, fmt.Sprintf("%s:%d", p, i+1))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// The command never holds the listener: no seccomp descriptor in any
// process of its namespace, even before its exec it was closed.
func TestTrappedListenerIsNotTheCommands(t *testing.T) {
	forEachInit(t, testTrappedListenerIsNotTheCommands)
}

func testTrappedListenerIsNotTheCommands(t *testing.T) {
	l := newLayout(t)
	s := trapSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	jdir := filepath.Join(l.work, ".tiny-agent", "journal")
	out := trapped(t, s, l.work, l.work, jdir, `for p in /proc/[0-9]*; do ls -l $p/fd/; done 2>&1; echo done`)
	if !strings.Contains(out, "done") || !strings.Contains(out, "pipe:") {
		t.Fatalf("the listing did not run: %q", out)
	}
	if strings.Contains(out, "seccomp") {
		t.Errorf("a process of the command holds a seccomp listener:\n%s", out)
	}
}

// A filter the kernel refuses stops the init before the command runs:
// StartTrapped says so at once (no hang), the init's line on stderr.
func TestTrappedBadFilterFailsClosed(t *testing.T) { forEachInit(t, testTrappedBadFilterFailsClosed) }

func testTrappedBadFilterFailsClosed(t *testing.T) {
	l := newLayout(t)
	s := trapSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	cmd := exec.Command("/bin/sh", "-c", "touch ran")
	cmd.Dir = l.work
	var stderr strings.Builder
	cmd.Stderr = &stderr
	bad := []byte{0xff, 0xff, 0, 0, 0, 0, 0, 0} // no such BPF instruction
	if _, err := s.StartTrapped(cmd, bad); err == nil {
		t.Fatal("StartTrapped with a bad filter did not fail")
	}
	if !strings.Contains(stderr.String(), "loading the journal's filter") {
		t.Errorf("the init's stderr: %q", stderr.String())
	}
	if exists(filepath.Join(l.work, "ran")) {
		t.Error("the command ran")
	}
}

// Without namespaces StartTrapped refuses, saying why.
func TestTrappedRefusedWithoutNamespaces(t *testing.T) {
	l := newLayout(t)
	requireLandlock(t)
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv, NoNamespaces: true})
	_, err := s.StartTrapped(exec.Command("/bin/true"), []byte{6, 0, 0, 0, 0, 0, 0xff, 0x7f})
	if err == nil || !strings.Contains(err.Error(), "namespaces") {
		t.Errorf("StartTrapped without namespaces: %v", err)
	}
	var none *Sandbox
	if _, err := none.StartTrapped(exec.Command("/bin/true"), nil); err == nil {
		t.Error("StartTrapped of a nil Sandbox did not refuse")
	}
}

// Under --network rules the trapped command has its proxy and its own
// network namespace too (the Go init does both), and is journaled.
func TestTrappedWithNetworkRules(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "page for "+r.Host)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	proxy := netproxy.New(netproxy.Config{
		Rules:   netproxy.DomainList{Allow: []string{"allowed.test"}},
		Resolve: loopbackHosts(map[string]string{"allowed.test": "127.0.0.1"}),
	})
	l := newLayout(t)
	s := trapSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv, NetworkRules: proxy})
	if s.NetworkRules() == nil {
		t.Fatal("--network rules is not in force")
	}
	writeFile(t, filepath.Join(l.work, "f"), "f", 0o644)
	before := treeState(t, l.work)
	jdir := filepath.Join(l.work, ".tiny-agent", "journal")
	out := trapped(t, s, l.work, l.work, jdir, fmt.Sprintf(`curl -sS -m 10 http://allowed.test:%s/ > f; cat f`, port))
	if !strings.Contains(out, "page for allowed.test") {
		t.Errorf("the command did not reach the proxy: %q", out)
	}
	if err := journal.Restore(jdir); err != nil {
		t.Fatal(err)
	}
	if after := treeState(t, l.work); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("after Restore:\n%v\nwant\n%v", after, before)
	}
}

// As a user (uid 1000, cloudsdk), commands start trapped in a user
// namespace of their own: the same tests again, as that user.
func TestTrappedAsUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		return // this run is the unprivileged one
	}
	requireLandlock(t)
	base, err := os.MkdirTemp("", "sandbox-trap-uid1000-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "sandbox.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(base, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.count=1", "-test.v", "-test.run=^TestTrapped", "-test.skip=^TestTrappedAsUnprivilegedUser$")
	cmd.Dir = base
	cmd.Env = []string{"TMPDIR=" + base, "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + base}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid 1000:\n%s", out)
	if err != nil || strings.Count(string(out), "--- PASS") < 20 || strings.Contains(string(out), "--- SKIP") {
		t.Fatalf("as uid 1000: %v", err)
	}
}

// Journaled, the command works on the tree itself: through either init,
// the tree is bound over itself nosuid and nodev, and the command runs in
// it (a device node planted there must not open).
func TestTrappedTreeIsNosuidNodev(t *testing.T) { forEachInit(t, testTrappedTreeIsNosuidNodev) }

func testTrappedTreeIsNosuidNodev(t *testing.T) {
	l := newLayout(t)
	s := trapSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	jdir := filepath.Join(l.work, ".tiny-agent", "journal")
	// Field 5 of mountinfo is the mount point, field 6 its options.
	out := trapped(t, s, l.work, l.work, jdir, fmt.Sprintf(`awk '$5 == %q { print "mount", $6 }' /proc/self/mountinfo; echo "cwd $PWD"`, l.work))
	if !strings.Contains(out, "cwd "+l.work) {
		t.Errorf("the command does not run in the tree: %q", out)
	}
	var mounts int
	for _, line := range strings.Split(out, "\n") {
		if opts, ok := strings.CutPrefix(line, "mount "); ok {
			mounts++
			if !strings.Contains(opts, "nosuid") || !strings.Contains(opts, "nodev") {
				t.Errorf("the tree is mounted without nosuid,nodev: %s", opts)
			}
		}
	}
	if mounts == 0 {
		t.Errorf("the tree is not a mount of its own: %q", out)
	}
}
