package sandbox

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// go build, git, make and pip run unchanged inside a command, with no
// capability and the seccomp filter (npm: TestNpmInstallWorksInWorkspaceMode).
// Each runs offline, against files of the test.
func TestToolchainsWorkInCommands(t *testing.T) {
	requireLandlock(t)
	l := newLayout(t)
	goBin, _ := exec.LookPath("go")
	files := map[string]string{
		"go.mod":   "module example.com/app\n\ngo 1.22\n",
		"main.go":  "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"go works\") }\n",
		"Makefile": "all: out.txt\n\tcat out.txt\n\nout.txt: in.txt\n\ttr a-z A-Z < in.txt > $@\n",
		"in.txt":   "make works\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(l.work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A user's cache directory exists (Go's build cache and pip's go there).
	if err := os.Mkdir(filepath.Join(l.home, ".cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	wheel := filepath.Join(l.outside, "tinydep-1.0-py3-none-any.whl")
	writeWheel(t, wheel)
	// The interpreter itself, not a version manager's shim (pyenv's
	// rehashes its shims after pip install: a write outside the roots).
	python := "python3"
	if b, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil {
		python = strings.TrimSpace(string(b))
	}
	// Go's own build cache, warm, as a --writable root: a cold one
	// compiles the runtime (a minute).
	var writable []string
	gocache := filepath.Join(l.home, ".cache", "go-build")
	if b, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && len(b) > 1 {
		gocache = strings.TrimSpace(string(b))
		writable = append(writable, gocache)
	}
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Writable: writable, Getenv: l.getenv})
	env := []string{"PATH=" + filepath.Dir(goBin) + ":" + l.env["PATH"], "HOME=" + l.home, "TMPDIR=" + l.tmp,
		"GOCACHE=" + gocache, "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=",
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_CACHE_DIR=" + filepath.Join(l.home, ".cache", "pip")}
	for _, c := range []struct{ name, script, want string }{
		{"go build", "go build -o app . && ./app", "go works"},
		{"git", "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm first && git log --format=%s && git status --short | wc -l", "first\n0"},
		{"make", "make -j2", "MAKE WORKS"},
		{"pip", python + " -m pip install -q --no-index --no-deps --target vendor " + wheel + " && PYTHONPATH=vendor " + python + " -c 'import tinydep; print(tinydep.X)'", "pip works"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool := strings.Fields(c.name)[0]
			if tool == "pip" {
				tool = "python3"
			}
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s is not installed", tool)
			}
			cmd := exec.Command("/bin/sh", "-c", c.script)
			cmd.Dir, cmd.Env = l.work, env
			out, err := startOutput(s, cmd)
			if err != nil || !strings.Contains(string(out), c.want) {
				t.Fatalf("%s in a command: %v\n%s", c.name, err, out)
			}
		})
	}
}

// writeWheel writes a pure-Python wheel of one module by hand, so that
// pip installs it without building anything or any network.
func writeWheel(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	for _, e := range [][2]string{
		{"tinydep/__init__.py", "X = 'pip works'\n"},
		{"tinydep-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n"},
		{"tinydep-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: tiny-go-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{"tinydep-1.0.dist-info/RECORD", "tinydep/__init__.py,,\ntinydep-1.0.dist-info/METADATA,,\ntinydep-1.0.dist-info/WHEEL,,\ntinydep-1.0.dist-info/RECORD,,\n"},
	} {
		w, err := z.Create(e[0])
		if err == nil {
			_, err = w.Write([]byte(e[1]))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}
