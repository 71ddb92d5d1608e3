package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BinaryEnv names a tiny-go binary built beforehand, which TinyGo returns
// instead of building one. scripts/test-unprivileged sets it: the user it
// runs the tests as cannot use root's Go caches to build.
const BinaryEnv = "TINY_TEST_BINARY"

// TinyGo returns the path of the real binary (cmd/tiny-go), built into a
// WorkDir folder that every user can enter, or $TINY_TEST_BINARY.
func TinyGo(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(BinaryEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("testenv: %s: %v", BinaryEnv, err)
		}
		return bin
	}
	bin := filepath.Join(WorkDir(t), "tiny-go")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tiny-agent/tiny-go/cmd/tiny-go")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
