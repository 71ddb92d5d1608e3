package hooks_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// The side-by-side tests share one tiny-go binary, built once (a build
// costs tens of seconds on a loaded machine).
var tinyBin struct {
	once      sync.Once
	dir, path string
	err       string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tinyBin.dir != "" {
		os.RemoveAll(tinyBin.dir)
	}
	os.Exit(code)
}

// tinyGo is the real binary: $TINY_TEST_BINARY, or one built for this
// package's tests.
func tinyGo(t testing.TB) string {
	t.Helper()
	if os.Getenv(testenv.BinaryEnv) != "" {
		return testenv.TinyGo(t)
	}
	tinyBin.once.Do(func() {
		dir, err := os.MkdirTemp("/var/tmp", "tiny-go-hooks-bin-")
		if err != nil {
			tinyBin.err = err.Error()
			return
		}
		tinyBin.dir, tinyBin.path = dir, filepath.Join(dir, "tiny-go")
		if out, err := exec.Command("go", "build", "-o", tinyBin.path, "github.com/tiny-agent/tiny-go/cmd/tiny-go").CombinedOutput(); err != nil {
			tinyBin.err = err.Error() + "\n" + string(out)
		}
	})
	if tinyBin.err != "" {
		t.Fatalf("go build: %s", tinyBin.err)
	}
	return tinyBin.path
}
