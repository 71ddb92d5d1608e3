package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/sandbox/nsinit"
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// Policy.Hidden's paths, and the folder of tiny-go's state key, are
// covered in each command's mount namespace, by either init: a file reads
// empty, a directory is empty and read-only, a path that does not exist
// is skipped, the list is re-read for each command, and neither the
// variable that carries it nor a change reaches the host.
func TestHiddenPaths(t *testing.T) { forEachInit(t, testHiddenPaths) }

func testHiddenPaths(t *testing.T) {
	if os.Geteuid() != 0 || ABI() == 0 {
		t.Skip("containment needs root and Landlock")
	}
	l := newLayout(t)
	keyDir := filepath.Join(l.home, "state key")
	if err := os.MkdirAll(keyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keyDir, "key"), []byte("KEY=s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(statekey.EnvDir, keyDir)
	secret := filepath.Join(l.work, ".env")
	dir := filepath.Join(l.work, "secrets")
	later := filepath.Join(l.work, "later.key")
	for p, body := range map[string]string{secret: "TOKEN=s3cr3t\n", filepath.Join(dir, "k"): "KEY=s3cr3t\n"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hidden := []string{secret, dir, filepath.Join(l.work, "missing"), later}
	s, warning, err := New(Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv, Hidden: func() []string { return hidden }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Hides() {
		t.Skipf("the kernel refused namespaces: %s", warning)
	}
	checkInit(t, s)
	run := func(script string) string {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = l.work
		cmd.Env = append(os.Environ(), "K="+keyDir)
		b, _ := startOutput(s, cmd)
		return string(b)
	}
	got := run("cat .env; ls secrets; cat secrets/k; touch secrets/x 2>&1 && echo wrote-dir; echo X > .env; env; " +
		"cat \"$K/key\" /proc/self/root\"$K/key\" /proc/1/root\"$K/key\"; ls -A \"$K\"; touch \"$K/x\" && echo wrote-dir")
	if strings.Contains(got, "s3cr3t") || strings.Contains(got, "wrote-dir") {
		t.Fatalf("a hidden path was seen or written: %q", got)
	}
	if strings.Contains(got, nsinit.HideEnv) {
		t.Errorf("the command sees %s: %q", nsinit.HideEnv, got)
	}
	if b, _ := os.ReadFile(secret); string(b) != "TOKEN=s3cr3t\n" {
		t.Errorf(".env on the host became %q", b)
	}
	if err := os.WriteFile(later, []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := run("cat later.key; echo end"); got != "end\n" {
		t.Errorf("a file made after the start is seen: %q", got)
	}
	hidden = nil
	if got := run("cat .env; cat \"$K/key\" 2>/dev/null"); got != "TOKEN=s3cr3t\n" {
		t.Errorf("with nothing hidden but the key the command reads %q", got)
	}
}

// BenchmarkStartHidden is the cost of a command start with a hidden path
// (the Go init) against one without (the static init where there is one).
func BenchmarkStartHidden(b *testing.B) {
	if os.Geteuid() != 0 || ABI() == 0 {
		b.Skip("containment needs root and Landlock")
	}
	work := b.TempDir()
	secret := filepath.Join(work, ".env")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		hidden []string
	}{{"none", nil}, {"one", []string{secret}}} {
		b.Run(c.name, func(b *testing.B) {
			s, _, err := New(Policy{Mode: Workspace, WorkDir: work, Hidden: func() []string { return c.hidden }})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if err := s.Start(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
