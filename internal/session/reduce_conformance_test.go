package session

import (
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"
)

type manifest struct {
	Version  int `json:"version"`
	Fixtures []struct {
		Name        string `json:"name"`
		File        string `json:"file"`
		Expected    string `json:"expected"`
		SchemaValid bool   `json:"schemaValid"`
	} `json:"fixtures"`
}

func loadManifest(t testing.TB, dir string) manifest {
	t.Helper()
	var m manifest
	if err := json.Unmarshal(readTestFile(t, filepath.Join(dir, "manifest.json")), &m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if len(m.Fixtures) == 0 {
		t.Fatal("manifest lists no fixtures")
	}
	return m
}

// TestConformance reduces every shared golden fixture and compares the
// printed result with its expectation.
func TestConformance(t *testing.T) {
	dir := filepath.Join(sessionDir(t), "fixtures")
	runFixtures(t, dir, loadManifest(t, dir))
}

// runFixtures checks each fixture of a manifest: schema-valid files
// validate line by line against session.schema.json, the reduction's
// printed result validates against expected-state.schema.json and equals
// the expectation.
func runFixtures(t *testing.T, dir string, m manifest) {
	sessionSchema, expectSchema := loadSchemas(t)
	for _, fx := range m.Fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			data := readTestFile(t, filepath.Join(dir, fx.File))
			want := readTestFile(t, filepath.Join(dir, fx.Expected))
			if fx.SchemaValid {
				for i, line := range committedLines(data) {
					if err := validateJSON(sessionSchema, line); err != nil {
						t.Errorf("line %d does not validate against session.schema.json: %v", i+1, err)
					}
				}
			}
			st, c := Reduce(data)
			got, err := MarshalResult(st, c)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateJSON(expectSchema, got); err != nil {
				t.Errorf("result does not validate against expected-state.schema.json: %v\n%s", err, got)
			}
			if c != nil {
				t.Logf("corruption: %v", c)
			}
			assertJSONEqual(t, got, want)
			// Resume's lean read: the same verdict, and the same state
			// but for the text it releases.
			reduceLean(t, data, 256<<10, st, c)
		})
	}
}

// TestScenarios checks this package's own fixtures (testdata/scenarios,
// written by TestScenarioFiles) exactly like the shared ones.
func TestScenarios(t *testing.T) {
	dir := filepath.Join("testdata", "scenarios")
	runFixtures(t, dir, loadManifest(t, dir))
}
