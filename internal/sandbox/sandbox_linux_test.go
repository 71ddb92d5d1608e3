package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/netproxy"
)

// TestMain doubles as a helper process: with SANDBOX_TEST_DIAL set, the
// test binary dials that address and reports the outcome on stdout.
func TestMain(m *testing.M) {
	if base := os.Getenv("SANDBOX_TEST_USERNS"); base != "" {
		nonDumpable()
		userNSChild(base)
		os.Exit(0)
	}
	if base := os.Getenv("SANDBOX_TEST_OVERLAY"); base != "" {
		nonDumpable()
		goInitOnly = os.Getenv("SANDBOX_TEST_GOINIT") == "true"
		fmt.Print(overlayRun(base))
		os.Exit(0)
	}
	if os.Getenv("SANDBOX_TEST_HOLD_SECRET") != "" {
		secretHolder()
		os.Exit(0)
	}
	if addr := os.Getenv("SANDBOX_TEST_DIAL"); addr != "" {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			fmt.Println("dial failed:", err)
			os.Exit(3)
		}
		c.Close()
		fmt.Println("connected")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// layout is a test tree whose temporary, cache and home directories are
// its own, so that "outside" is outside every root.
type layout struct {
	work, tmp, home, outside string
	env                      map[string]string
}

func newLayout(t *testing.T) layout {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := layout{
		work:    filepath.Join(base, "work"),
		tmp:     filepath.Join(base, "tmp"),
		home:    filepath.Join(base, "home"),
		outside: filepath.Join(base, "outside"),
	}
	for _, d := range []string{l.work, l.tmp, l.home, l.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l.env = map[string]string{"TMPDIR": l.tmp, "HOME": l.home, "PATH": os.Getenv("PATH")}
	return l
}

func (l layout) getenv(name string) string { return l.env[name] }

func requireLandlock(t *testing.T) {
	t.Helper()
	if ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
}

func newSandbox(t *testing.T, p Policy) *Sandbox {
	t.Helper()
	s, warning, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	if warning != "" {
		t.Logf("warning: %s", warning)
	}
	t.Cleanup(s.Close)
	return s
}

// run runs script with sh -c, confined by s, in dir.
func run(t *testing.T, s *Sandbox, dir, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	return startWait(t, s, cmd)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestWorkspaceConfinesCommandsAndWhatTheyStart(t *testing.T) {
	requireLandlock(t)
	l := newLayout(t)
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	if !s.Confined() {
		t.Fatal("commands are not confined on a kernel with Landlock")
	}

	out, err := run(t, s, l.work, "echo x > "+filepath.Join(l.outside, "direct"))
	if err == nil || exists(filepath.Join(l.outside, "direct")) {
		t.Fatalf("a command wrote outside the roots (err %v, output %q)", err, out)
	}
	// A grandchild that leaves the process group and the session.
	script := fmt.Sprintf("setsid sh -c 'echo x > %s/escaped; echo x > %s/inside' & wait", l.outside, l.work)
	if out, err := run(t, s, l.work, script); err != nil {
		t.Fatalf("setsid command: %v: %s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !exists(filepath.Join(l.work, "inside")) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !exists(filepath.Join(l.work, "inside")) {
		t.Fatal("the setsid grandchild could not write inside the working directory")
	}
	if exists(filepath.Join(l.outside, "escaped")) {
		t.Fatal("a setsid grandchild wrote outside the roots")
	}
	for _, ok := range []string{filepath.Join(l.work, "a"), filepath.Join(l.tmp, "b"), "/dev/null"} {
		if out, err := run(t, s, l.work, "echo x > "+ok); err != nil {
			t.Errorf("writing %s: %v: %s", ok, err, out)
		}
	}
	// What shells and build tools do every day keeps working.
	for _, script := range []string{
		"mkdir sub && mv a sub/a && rm -r sub",
		"echo hi > /dev/stderr && echo hi >> /dev/stdout",
		"mkfifo fifo && rm fifo && ln -s x link && rm link",
	} {
		if out, err := run(t, s, l.work, script); err != nil {
			t.Errorf("%s: %v: %s", script, err, out)
		}
	}
	// Reading stays unrestricted.
	if err := os.WriteFile(filepath.Join(l.outside, "readme"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, s, l.work, "cat "+filepath.Join(l.outside, "readme")); err != nil || out != "hello" {
		t.Errorf("reading outside the roots: %v: %q", err, out)
	}
	// tiny-go itself is not confined.
	if err := os.WriteFile(filepath.Join(l.outside, "host"), nil, 0o600); err != nil {
		t.Fatalf("the host process was confined: %v", err)
	}
}

func TestReadOnlyAllowsOnlyTheTemporaryDirectory(t *testing.T) {
	requireLandlock(t)
	l := newLayout(t)
	s := newSandbox(t, Policy{Mode: ReadOnly, WorkDir: l.work, Getenv: l.getenv})
	if _, err := run(t, s, l.work, "echo x > inside"); err == nil || exists(filepath.Join(l.work, "inside")) {
		t.Fatal("read-only mode let a command write in the working directory")
	}
	if out, err := run(t, s, l.work, "echo x > "+filepath.Join(l.tmp, "t")); err != nil {
		t.Fatalf("read-only mode refused the temporary directory: %v: %s", err, out)
	}
	if err := s.CheckWrite("f", filepath.Join(l.work, "f")); err == nil {
		t.Fatal("read-only mode let write and edit change the working directory")
	}
}

func TestWritableRootsAreAdded(t *testing.T) {
	requireLandlock(t)
	l := newLayout(t)
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Writable: []string{l.outside}, Getenv: l.getenv})
	if out, err := run(t, s, l.work, "echo x > "+filepath.Join(l.outside, "f")); err != nil {
		t.Fatalf("--writable root refused: %v: %s", err, out)
	}
	if _, _, err := New(Policy{Mode: Workspace, WorkDir: l.work, Writable: []string{filepath.Join(l.work, "missing")}, Getenv: l.getenv}); err == nil {
		t.Fatal("a missing --writable directory was accepted")
	}
}

func TestCheckWrite(t *testing.T) {
	l := newLayout(t)
	s, _, err := New(Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.Symlink(l.outside, filepath.Join(l.work, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(l.work, "new/dir/file"), true},
		{filepath.Join(l.tmp, "f"), true},
		{filepath.Join(l.home, ".config", "x"), false},
		{filepath.Join(l.outside, "f"), false},
		{filepath.Join(l.work, "link", "f"), false},
		{filepath.Join(l.work, "..", "outside", "f"), false},
		{l.work + "2/f", false},
	} {
		err := s.CheckWrite(tc.path, tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("CheckWrite(%s) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		var de *DeniedError
		if err != nil && (!errors.As(err, &de) || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), "--writable")) {
			t.Errorf("the refusal names neither the path nor the fix: %v", err)
		}
	}
	// .tiny-agent is tiny-go's, also through a link (as root the kernel
	// refuses it as well; for other users this is the refusal).
	if err := os.Symlink(filepath.Join(l.work, ".tiny-agent"), filepath.Join(l.work, "state")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(l.work, ".tiny-agent", "sessions", "x.jsonl"), filepath.Join(l.work, "state", "x")} {
		if err := s.CheckWrite(p, p); err == nil || !strings.Contains(err.Error(), "only tiny-go itself changes") {
			t.Errorf("CheckWrite(%s) = %v, want the refusal of .tiny-agent", p, err)
		}
	}
	var off *Sandbox
	if err := off.CheckWrite("/etc/x", "/etc/x"); err != nil {
		t.Errorf("a nil sandbox refused a write: %v", err)
	}
}

func TestGoBuildWorksInWorkspaceMode(t *testing.T) {
	requireLandlock(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The real environment: the real caches must be writable roots.
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: work})
	files := map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from the sandbox\") }\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run(t, s, work, goBin+" build -o hello . && ./hello")
	if err != nil || !strings.Contains(out, "hello from the sandbox") {
		t.Fatalf("go build in workspace mode: %v\n%s", err, out)
	}
}

// git commit in the working directory keeps working in workspace mode
// with the real home, cache and temporary directories.
func TestGitCommitWorksInWorkspaceMode(t *testing.T) {
	requireLandlock(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: work})
	script := "git init -q . && echo hi > f && git add f && " +
		"git -c user.name=t -c user.email=t@example.com commit -qm first && git log --oneline | wc -l"
	if out, err := run(t, s, work, script); err != nil || strings.TrimSpace(out) != "1" {
		t.Errorf("git commit in workspace mode: %v\n%s", err, out)
	}
}

// npm install in the working directory keeps working in workspace mode:
// it writes node_modules and its package-lock in the workspace and its
// cache under ~/.npm (a fresh home here, so the cache is really written;
// tiny-go creates ~/.npm when npm is installed, since a confined npm
// could not). The package is a tarball made with npm pack, so no network
// is needed (--offline).
func TestNpmInstallWorksInWorkspaceMode(t *testing.T) {
	requireLandlock(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed (CI installs it)")
	}
	l := newLayout(t)
	env := []string{"PATH=" + l.env["PATH"], "HOME=" + l.home, "TMPDIR=" + l.tmp, "npm_config_update_notifier=false"}

	// The package, packed outside the sandbox and outside the workspace.
	pkg := filepath.Join(l.outside, "tiny-dep")
	if err := os.Mkdir(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"package.json": `{"name":"tiny-dep","version":"1.0.0","main":"index.js"}`,
		"index.js":     "module.exports = 'tiny-dep works';\n",
	} {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pack := exec.Command(npm, "pack", "--silent", "--pack-destination", l.outside)
	pack.Dir, pack.Env = pkg, env
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v\n%s", err, out)
	}
	tarball := filepath.Join(l.outside, "tiny-dep-1.0.0.tgz")
	// npm pack used the cache; the confined install must write it itself.
	if err := os.RemoveAll(filepath.Join(l.home, ".npm")); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(filepath.Join(l.work, "package.json"), []byte(`{"name":"x","version":"1.0.0","private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	cmd := exec.Command("sh", "-c", "npm install --offline --no-audit --no-fund "+tarball+" 2>&1 && node -e 'console.log(require(\"tiny-dep\"))'")
	cmd.Dir, cmd.Env = l.work, env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "tiny-dep works") {
		t.Fatalf("npm install in workspace mode: %v\n%s", err, out.String())
	}
	for _, p := range []string{
		filepath.Join(l.work, "package-lock.json"),
		filepath.Join(l.work, "node_modules", "tiny-dep", "index.js"),
		filepath.Join(l.home, ".npm", "_cacache", "index-v5"),
	} {
		if !exists(p) {
			t.Errorf("npm install did not write %s", p)
		}
	}
	// Outside the roots, npm could write nothing.
	if entries, _ := os.ReadDir(l.outside); len(entries) != 2 {
		t.Errorf("outside has %d entries, want the package and its tarball", len(entries))
	}
}

func TestNetworkOffRefusesLoopbackConnect(t *testing.T) {
	if abi := ABI(); abi < 4 {
		t.Skipf("Landlock ABI %d has no network rules (needs 4)", abi)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	l := newLayout(t)
	dial := func(s *Sandbox) (string, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "SANDBOX_TEST_DIAL="+ln.Addr().String())
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := s.Start(cmd); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		return out.String(), err
	}
	on := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	if out, err := dial(on); err != nil {
		t.Fatalf("without --network off the connect failed: %v: %s", err, out)
	}
	for _, mode := range []Mode{Workspace, Off} {
		off := newSandbox(t, Policy{Mode: mode, WorkDir: l.work, NetworkOff: true, Getenv: l.getenv})
		if !off.NetworkOff() {
			t.Fatalf("%s: network rules not in force on ABI %d", mode, ABI())
		}
		out, err := dial(off)
		if err == nil || !strings.Contains(out, "permission denied") {
			t.Fatalf("%s: --network off let a command connect to loopback: %v: %s", mode, err, out)
		}
	}
	// The host keeps its network.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("the host lost its network: %v", err)
	}
	c.Close()
}

// Without Landlock: one warning line, commands run unconfined, and write
// and edit are still held to the roots.
func TestWithoutLandlock(t *testing.T) {
	l := newLayout(t)
	s, warning, err := newWithABI(Policy{Mode: Workspace, WorkDir: l.work, NetworkOff: true, Getenv: l.getenv}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if warning == "" || strings.Contains(warning, "\n") || !strings.Contains(warning, "write and edit only") {
		t.Fatalf("warning = %q, want one line saying what still applies", warning)
	}
	if s.Confined() || s.NetworkOff() {
		t.Fatal("commands claim to be confined without Landlock")
	}
	if out, err := run(t, s, l.work, "echo x > "+filepath.Join(l.outside, "f")); err != nil {
		t.Fatalf("an unconfined command failed: %v: %s", err, out)
	}
	if err := s.CheckWrite("f", filepath.Join(l.outside, "g")); err == nil {
		t.Fatal("write and edit are not held to the roots without Landlock")
	}
	// ABI 3: no network rules, one warning, the file system still confined.
	if ABI() >= 3 {
		s3, warning, err := newWithABI(Policy{Mode: Workspace, WorkDir: l.work, NetworkOff: true, Getenv: l.getenv}, 3)
		if err != nil {
			t.Fatal(err)
		}
		defer s3.Close()
		if s3.NetworkOff() || !strings.Contains(warning, "--network off needs Landlock ABI 4") {
			t.Fatalf("ABI 3: networkOff=%v warning %q", s3.NetworkOff(), warning)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"workspace", "read-only", "off"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseMode("strict"); err == nil {
		t.Error("ParseMode accepted an unknown mode")
	}
}

// BenchmarkStartConfined measures starting and waiting for a trivial
// command confined by the sandbox (Landlock alone, and Landlock with the
// namespaces through the static init and through the Go one, and with
// --network rules: a network namespace, the Go init, the proxy's socket
// handed over and served), against the same command unconfined.
func BenchmarkStartConfined(b *testing.B) {
	work := b.TempDir()
	for _, c := range []struct {
		name   string
		mode   Mode
		noNS   bool
		goInit bool
		rules  bool
	}{
		{"off", Off, true, false, false},
		{"landlock", Workspace, true, false, false},
		{"landlock+namespaces", Workspace, false, false, false},
		{"landlock+namespaces(go-init)", Workspace, false, true, false},
		{"landlock+namespaces+network-rules", Workspace, false, false, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			goInitOnly = c.goInit
			defer func() { goInitOnly = false }()
			p := Policy{Mode: c.mode, WorkDir: work, NoNamespaces: c.noNS}
			if c.rules {
				p.NetworkRules = netproxy.New(netproxy.Config{})
			}
			s, _, err := New(p)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if s.Namespaced() == c.noNS || (c.rules && s.NetworkRules() == nil) {
				b.Skip("the kernel refused namespaces")
			}
			b.ResetTimer()
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if err := s.Start(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				s.NetworkRefusals(cmd)
			}
		})
	}
}

// nonDumpable makes the test process non-dumpable, as tiny-go makes
// itself (secrets.ProtectMemory): the kernel then refuses it the id maps
// of its children's user namespaces, which the init writes instead.
func nonDumpable() {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		panic(err)
	}
}

// A new user's home has no ~/.cache: tiny-go makes go's build cache there
// (or where GOCACHE says) when go is installed, as a confined go build
// could not. The unprivileged CI pass found it.
func TestGoCacheIsMadeInAFreshHome(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, gocache := range []string{"", "elsewhere/gocache"} {
		l := newLayout(t)
		l.env["PATH"] = bin
		want := filepath.Join(l.home, ".cache", "go-build")
		if gocache != "" {
			want = filepath.Join(l.outside, gocache)
			l.env["GOCACHE"] = want
		}
		roots := writableRoots(Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
		if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
			t.Fatalf("GOCACHE %q: %s was not made: %v", gocache, want, err)
		}
		if !underAny(want, roots) {
			t.Errorf("GOCACHE %q: %s is not under the roots %q", gocache, want, roots)
		}
	}
}

// A sealed command (--approval review) reaches nothing outside: a UDP
// datagram to a listener on the host's loopback never arrives, nor does a
// connection to a unix socket outside the tree, where --network off alone
// (TCP only) lets both through; through either init.
func TestSealedCommandsReachNothingOutside(t *testing.T) {
	forEachInit(t, func(t *testing.T) {
		requireLandlock(t)
		udp, port := udpListener(t)
		sock, heard := unixListener(t)
		l := newLayout(t)
		reach := func(s *Sandbox, msg string) string {
			checkInit(t, s)
			script := fmt.Sprintf(`echo -n %s > /dev/udp/127.0.0.1/%s && echo udp-sent; `+
				`python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode()); print("unix-sent")' %q %s`, msg, port, sock, msg)
			cmd := exec.Command("/bin/bash", "-c", script)
			cmd.Dir = l.work
			out, _ := startWait(t, s, cmd)
			return out
		}
		plain := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, NetworkOff: true, Getenv: l.getenv})
		if out := reach(plain, "plain"); !strings.Contains(out, "udp-sent") || !strings.Contains(out, "unix-sent") {
			t.Fatalf("with --network off alone the command did not reach out: %s", out)
		}
		for _, ch := range []chan string{udp, heard} {
			select {
			case m := <-ch:
				if m != "plain" {
					t.Fatalf("got %q", m)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("with --network off alone a message never arrived")
			}
		}
		sealed := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, NetworkOff: true, Sealed: true, Scratch: t.TempDir(), Getenv: l.getenv})
		out := reach(sealed, "sealed")
		if strings.Contains(out, "sent") {
			t.Errorf("a sealed command reached out: %s", out)
		}
		for _, ch := range []chan string{udp, heard} {
			select {
			case m := <-ch:
				t.Fatalf("a sealed command's message arrived: %q", m)
			case <-time.After(300 * time.Millisecond):
			}
		}
	})
}

// udpListener receives datagrams on the host's loopback.
func udpListener(t *testing.T) (chan string, string) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	got := make(chan string, 4)
	go func() {
		buf := make([]byte, 64)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			got <- string(buf[:n])
		}
	}()
	_, port, _ := net.SplitHostPort(pc.LocalAddr().String())
	return got, port
}

// unixListener serves a unix socket outside any tree, open to every user.
func unixListener(t *testing.T) (string, chan string) {
	dir, err := os.MkdirTemp("", "sealed-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	os.Chmod(path, 0o777)
	got := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			c.Close()
			got <- string(b)
		}
	}()
	return path, got
}

// startWait runs cmd, confined by s, and returns its output.
func startWait(t *testing.T, s *Sandbox, cmd *exec.Cmd) (string, error) {
	t.Helper()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	return out.String(), err
}
