package nsinit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The committed bytes of the static init are what its source assembles
// to (when GNU as and ld are here to check).
func TestELFIsItsSource(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the static init is for amd64")
	}
	for _, tool := range []string{"as", "ld"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s to assemble the source", tool)
		}
	}
	out := filepath.Join(t.TempDir(), "elf_amd64.go")
	if b, err := exec.Command("sh", "elf/gen.sh", out).CombinedOutput(); err != nil {
		t.Fatalf("gen.sh: %v: %s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("elf_amd64.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("elf_amd64.go is not what elf/init_amd64.asm assembles to: run elf/gen.sh")
	}
}

// badArguments are argument lists no init may run a command from.
func badArguments(marker string) [][]string {
	return [][]string{
		{"x", "", "/bin/touch", "touch", marker},
		{"2", "", "/bin/touch", "touch", marker},
		{"9", "", "/bin/touch", "touch", marker}, // the filter would be descriptor 10
		{"3x", "", "/bin/touch", "touch", marker},
		{"3o1z", "", "/lower", "opts", "/bin/touch", "touch", marker},
		{"3o", "", "/bin/touch", "touch", marker},
		{"3u", "0 0 1", "/bin/touch", "touch", marker},
	}
}

// Given arguments it does not understand, the static init runs nothing
// and says so (the steps that follow need a namespace of their own and
// are tested through the sandbox).
func TestStaticInitRefusesBadArguments(t *testing.T) {
	if Program() == nil {
		t.Skip("no static init on " + runtime.GOARCH)
	}
	bin := filepath.Join(t.TempDir(), "init")
	if err := os.WriteFile(bin, Program(), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	for _, args := range append(badArguments(marker), []string{}) {
		checkRefused(t, exec.Command(bin, args...), "bad arguments")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran")
	}
}

// The same of the Go init: this test binary started as Argv0.
func TestGoInitRefusesBadArguments(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	for _, args := range badArguments(marker) {
		cmd := exec.Command(os.Args[0])
		cmd.Args = append([]string{Argv0}, args...)
		checkRefused(t, cmd, "bad ")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran")
	}
}

func checkRefused(t *testing.T, cmd *exec.Cmd, want string) {
	t.Helper()
	b, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != ExitSetup || !strings.Contains(string(b), want) {
		t.Errorf("init %q: %v, %q; want status %d and %q", cmd.Args, err, b, ExitSetup, want)
	}
}
