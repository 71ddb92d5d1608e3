package recovery

import (
	"bytes"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tiny-agent/tiny-go/internal/conformance"
)

// conformanceDir is the shared conformance folder.
func conformanceDir(t testing.TB) string { return conformance.Dir(t) }

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
