package mcp

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// conformanceUnsupported are the client scenarios of the official suite
// tiny-go does not pass, each with why. The test fails when one of them
// starts passing, so the list stays true.
// None at the pinned version.
var conformanceUnsupported = map[string]string{}

// TestConformanceSuite runs every client scenario of the official MCP
// conformance suite (@modelcontextprotocol/conformance, pinned in
// testdata/conformance with the Node 22 it needs) against the real tiny-go
// binary: testdata/conformance/client.sh signs in with `tiny-go mcp login`
// and a BROWSER that fetches the URL, and calls tools with `tiny-go mcp
// call`.
func TestConformanceSuite(t *testing.T) {
	dir, err := filepath.Abs("testdata/conformance")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "node_modules/.bin")
	if _, err := os.Stat(filepath.Join(bin, "conformance")); err != nil {
		t.Skip("run: npm ci --prefix internal/mcp/testdata/conformance (.ci/run does)")
	}
	tinyGo := filepath.Join(t.TempDir(), "tiny-go")
	if out, err := exec.Command("go", "build", "-o", tinyGo, "../../cmd/tiny-go").CombinedOutput(); err != nil {
		t.Fatalf("building tiny-go: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(bin, "node"), filepath.Join(bin, "conformance"), "client",
		"--command", filepath.Join(dir, "client.sh"), "--suite", "all", "-o", t.TempDir(),
		// The scenarios run at once; on a busy machine 30 s per client is short.
		"--timeout", "120000")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "TINY_GO="+tinyGo, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // it fails when any scenario does; the summary says which

	results := suiteSummary(out.String())
	if len(results) == 0 {
		t.Fatalf("no suite summary in the output:\n%s", out.String())
	}
	passed, names := 0, make([]string, 0, len(results))
	for name := range results {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		failed := results[name] > 0
		why, unsupported := conformanceUnsupported[name]
		switch {
		case failed && !unsupported:
			t.Errorf("scenario %s: %d checks failed", name, results[name])
		case !failed && unsupported:
			t.Errorf("scenario %s passes now: take it off conformanceUnsupported (%s)", name, why)
		case !failed:
			passed++
		}
	}
	t.Logf("%d of %d client scenarios pass", passed, len(results))
	if len(conformanceUnsupported) > 0 {
		t.Logf("not supported: %v", conformanceUnsupported)
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", out.String())
	}
}

var summaryLine = regexp.MustCompile(`^[✓✗] (\S+): (\d+) passed, (\d+) failed`)

// suiteSummary maps each scenario of the suite summary to its failed checks.
func suiteSummary(out string) map[string]int {
	results := map[string]int{}
	inSummary := false
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.Contains(line, "SUITE SUMMARY") {
			inSummary = true
			continue
		}
		if m := summaryLine.FindStringSubmatch(line); inSummary && m != nil {
			n, _ := strconv.Atoi(m[3])
			results[m[1]] = n
		}
	}
	return results
}
