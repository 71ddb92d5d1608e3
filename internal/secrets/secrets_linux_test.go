package secrets

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const secret = "sk-test-0123456789abcdef"

// TestMain doubles as the child of TestConcealHidesFromProcEnviron.
func TestMain(m *testing.M) {
	if os.Getenv("SECRETS_TEST_CHILD") != "" {
		getenv, err := Conceal([]string{"OPENROUTER_API_KEY", "MCP_TOKEN"})
		if err != nil {
			fmt.Println("conceal:", err)
			os.Exit(3)
		}
		environ, err := os.ReadFile("/proc/self/environ")
		if err != nil {
			fmt.Println("read:", err)
			os.Exit(3)
		}
		// Another process reads the same bytes.
		other, err := exec.Command("cat", fmt.Sprintf("/proc/%d/environ", os.Getpid())).Output()
		if err != nil {
			fmt.Println("cat:", err)
			os.Exit(3)
		}
		if err := ProtectMemory(); err != nil {
			fmt.Println("protect:", err)
			os.Exit(3)
		}
		if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
			fmt.Println("still dumpable:", d, err)
			os.Exit(3)
		}
		child, _ := exec.Command("env").Output()
		fmt.Printf("proc=%v other=%v child=%v goenv=%q kept=%q mcp=%q keep=%q\n",
			bytes.Contains(environ, []byte(secret)), bytes.Contains(other, []byte(secret)),
			bytes.Contains(child, []byte(secret)), os.Getenv("OPENROUTER_API_KEY"),
			getenv("OPENROUTER_API_KEY"), getenv("MCP_TOKEN"), getenv("KEEP_ME"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestConcealHidesFromProcEnviron(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SECRETS_TEST_CHILD=1", "OPENROUTER_API_KEY="+secret, "KEEP_ME=yes", "MCP_TOKEN=mcp-"+secret)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	want := fmt.Sprintf("proc=false other=false child=false goenv=\"\" kept=%q mcp=%q keep=\"yes\"\n", secret, "mcp-"+secret)
	if string(out) != want {
		t.Fatalf("child reported\n%s\nwant\n%s", out, want)
	}
}

func TestNamesReadsTheMCPCatalog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	catalog := `{"servers": {"b": {"url": "https://x", "tokenEnv": "B_TOKEN"}, "a": {"command": "srv", "tokenEnv": "A_TOKEN", "passEnv": ["X"]}, "c": {"url": "https://y"}}}`
	if err := os.WriteFile(path, []byte(catalog), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TINY_MCP_CONFIG": path}
	got := Names(func(k string) string { return env[k] })
	want := []string{"OPENROUTER_API_KEY", "TINY_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "BRAVE_API_KEY", "A_TOKEN", "B_TOKEN"}
	if !slices.Equal(got, want) {
		t.Fatalf("Names = %v, want %v", got, want)
	}
	env["TINY_MCP_CONFIG"] = filepath.Join(t.TempDir(), "missing.json")
	if got := Names(func(k string) string { return env[k] }); !slices.Equal(got, slices.Concat(ModelKeyVars, SearchKeyVars)) {
		t.Fatalf("Names with a missing catalog = %v", got)
	}
}

func TestScrubber(t *testing.T) {
	s := NewScrubber(secret, "short", "", secret+"-longer")
	in := "a " + secret + " b " + secret + "-longer c short"
	got := s.Scrub(in)
	if strings.Contains(got, secret) || got != "a "+Mask+" b "+Mask+" c short" {
		t.Fatalf("Scrub = %q", got)
	}
	var none *Scrubber
	if none.Scrub(in) != in {
		t.Fatal("a nil Scrubber changed the text")
	}
}

func TestWithoutEntries(t *testing.T) {
	block := []byte("A=1\x00SECRET=xyz\x00B=2\x00SECRETX=3\x00")
	got := withoutEntries(block, []string{"SECRET"})
	want := []byte("A=1\x00B=2\x00SECRETX=3\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	if !bytes.Equal(got, want) {
		t.Fatalf("withoutEntries = %q, want %q", got, want)
	}
}

func FuzzEnvBounds(f *testing.F) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(stat)
	f.Add([]byte("1 (a) b) R 1 2 3"))
	f.Fuzz(func(t *testing.T, data []byte) {
		start, end, err := envBounds(data)
		if err == nil && end < start {
			t.Fatalf("bounds %d > %d accepted", start, end)
		}
	})
}

func FuzzWithoutEntries(f *testing.F) {
	f.Add([]byte("A=1\x00SECRET=xyz\x00"), "SECRET")
	f.Fuzz(func(t *testing.T, block []byte, name string) {
		out := withoutEntries(block, []string{name})
		if len(out) != len(block) {
			t.Fatalf("length changed: %d -> %d", len(block), len(out))
		}
		for entry := range bytes.SplitSeq(out, []byte{0}) {
			if n, _, _ := bytes.Cut(entry, []byte{'='}); len(entry) > 0 && string(n) == name {
				t.Fatalf("entry %q kept", entry)
			}
		}
	})
}
