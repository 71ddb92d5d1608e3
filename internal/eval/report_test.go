package eval

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sampleReport has a task that passes, one that fails one run of two,
// and one that could not run.
func sampleReport() *Report {
	run := func(task string, rep int, status string, ms int64, in, out int64, reason string) RunResult {
		return RunResult{Task: task, Rep: rep, Passed: status == StatusPass, Status: status, Reason: reason, WallMs: ms,
			Metrics: Metrics{Requests: 3, Tokens: Tokens{Input: in, Output: out, CacheRead: in / 2}, ToolCalls: map[string]int{"bash": 2, "read": 1}, ToolErrors: 1}}
	}
	return &Report{Version: ReportVersion, Started: "2026-12-03T12:00:00Z", WallMs: 9000, Mode: ModeReplay, Repeat: 2, Parallel: 2, Tasks: []TaskResult{
		summarize("alpha-task", []RunResult{run("alpha-task", 1, StatusPass, 4000, 2000, 100, ""), run("alpha-task", 2, StatusPass, 5000, 2000, 100, "")}),
		summarize("beta-task", []RunResult{run("beta-task", 1, StatusPass, 1000, 8000, 300, ""), run("beta-task", 2, StatusFail, 3000, 9000, 400, "test.sh exited 1: boom")}),
		summarize("gamma-task", []RunResult{{Task: "gamma-task", Rep: 1, Status: StatusError, Reason: "task folder has no fixture/", Metrics: Metrics{ToolCalls: map[string]int{}}}}),
	}}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"alpha-task  2/2", "4.5s ±707ms", "bash 2, read 1",
		"beta-task   1/2", "8.5k", // mean input of 8000 and 9000
		"2.0s ±1.4s",
		"gamma-task  ERROR",
		"beta-task #2: test.sh exited 1: boom",
		"gamma-task: task folder has no fixture/",
		"3/5 passed (60%) in 9.0s, replay",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	var b bytes.Buffer
	if err := sampleReport().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, b.Bytes(), 0o644)
	r, err := LoadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, n := r.Passed(); p != 3 || n != 5 || r.Tasks[1].Runs[1].Reason != "test.sh exited 1: boom" || r.Tasks[0].WallMs.Mean != 4500 {
		t.Errorf("round trip: %+v", r)
	}
	os.WriteFile(path, []byte(`{"version":99}`), 0o644)
	if _, err := LoadReport(path); err == nil {
		t.Error("a report of another version loaded")
	}
}

func TestCompare(t *testing.T) {
	before := sampleReport()
	after := sampleReport()
	after.Tasks[1] = summarize("beta-task", []RunResult{after.Tasks[1].Runs[0], after.Tasks[1].Runs[0]}) // both pass now
	after.Tasks[0].Tokens.Mean *= 1.10
	after.Tasks = append(after.Tasks[:2], summarize("delta-task", after.Tasks[0].Runs))
	var b bytes.Buffer
	if err := Compare(before, after).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"alpha-task  100% → 100%", "(+10%)",
		"beta-task   50% → 100% (+50)", "13.1k → 12.3k (-6%)", "2.0s → 1.0s (-50%)",
		"gamma-task  gone (was 0%)",
		"delta-task  new: 100%",
		"2 tasks in both: pass rate 75% → 100% (+25)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
}

// TestHTMLReportInChromium renders the HTML report in headless Chromium:
// the DOM has one row per task with its result, and a screenshot shows
// the time bars.
func TestHTMLReportInChromium(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := sampleReport().WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Contains(html, "http://") || strings.Contains(html, "https://") || strings.Contains(html, "<script") {
		t.Error("the report is not self-contained")
	}
	os.WriteFile(page, b.Bytes(), 0o644)
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
	}
	chromium := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
			"--user-data-dir=" + filepath.Join(dir, "profile")}
		out, err := exec.CommandContext(ctx, browser, append(base, args...)...).Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", args, err)
		}
		return out
	}
	dom := string(chromium("--dump-dom", "file://"+page))
	for _, want := range []string{"<td>alpha-task</td>", "<td>beta-task</td>", "<td>gamma-task</td>", `<td class="fail">ERROR</td>`, "test.sh exited 1: boom"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	shot := filepath.Join(dir, "shot.png")
	chromium("--window-size=1000,400", "--screenshot="+shot, "file://"+page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The time bar's colour (#4f6bed) is on the page: the bars rendered.
	bars := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 == 0x4f && g>>8 == 0x6b && b>>8 == 0xed {
				bars++
			}
		}
	}
	if bars < 100 {
		t.Errorf("the screenshot shows %d pixels of the time bars", bars)
	}
}
