package recovery

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// TestPlannerFixtures runs every case of planner-fixtures/manifest.json:
// reduce the named session file, plan with the given current
// configuration, and compare with the expected plan.
func TestPlannerFixtures(t *testing.T) {
	dir := filepath.Join(conformanceDir(t), "session")
	var manifest struct {
		Version  int `json:"version"`
		Fixtures []struct {
			Name     string `json:"name"`
			Input    string `json:"input"`
			Expected string `json:"expected"`
		} `json:"fixtures"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(dir, "planner-fixtures", "manifest.json")), &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.Version != 1 || len(manifest.Fixtures) == 0 {
		t.Fatalf("unexpected manifest: version %d, %d fixtures", manifest.Version, len(manifest.Fixtures))
	}
	for _, fx := range manifest.Fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			var input struct {
				SessionFile string         `json:"sessionFile"`
				Current     jsontext.Value `json:"current"`
			}
			if err := json.Unmarshal(read(t, filepath.Join(dir, "planner-fixtures", fx.Input)), &input, json.RejectUnknownMembers(true)); err != nil {
				t.Fatal(err)
			}
			current, err := DecodeCurrent(input.Current)
			if err != nil {
				t.Fatal(err)
			}
			state, c := session.Reduce(read(t, filepath.Join(dir, "fixtures", input.SessionFile)))
			if c != nil {
				t.Fatalf("%s: %v", input.SessionFile, c)
			}
			checkPlan(t, Plan(state, current), read(t, filepath.Join(dir, "planner-fixtures", fx.Expected)))
		})
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
