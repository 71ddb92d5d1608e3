package recovery

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// conformanceDir locates ../shared/conformance beside the repository root.
// TODO: switch to internal/conformance.Dir once it lands.
func conformanceDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "conformance")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

func planSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		path := filepath.Join(conformanceDir(t), "session", "schemas", "recovery-plan.schema.json")
		schema, schemaErr = jsonschema.NewCompiler().Compile(path)
	})
	if schemaErr != nil {
		t.Fatalf("compile recovery-plan.schema.json: %v", schemaErr)
	}
	return schema
}

// checkPlan marshals got, validates it against recovery-plan.schema.json
// and compares it semantically with the expected JSON.
func checkPlan(t *testing.T, got Action, want []byte) {
	t.Helper()
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("marshal %#v: %v", got, err)
	}
	validatePlan(t, data)
	var g, w any
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("bad expected JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("plan\n got %s\nwant %s", data, bytes.TrimSpace(want))
	}
}

func validatePlan(t *testing.T, data []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := planSchema(t).Validate(inst); err != nil {
		t.Errorf("plan %s does not match recovery-plan.schema.json: %v", data, err)
	}
}
