package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tiny-agent/tiny-go/internal/conformance"
)

// sessionDir is the shared session conformance folder.
func sessionDir(t testing.TB) string {
	return filepath.Join(conformance.Dir(t), "session")
}

var schemas struct {
	once            sync.Once
	session, expect *jsonschema.Schema
	err             error
}

// loadSchemas compiles session.schema.json and expected-state.schema.json.
func loadSchemas(t testing.TB) (session, expected *jsonschema.Schema) {
	t.Helper()
	dir := filepath.Join(sessionDir(t), "schemas")
	schemas.once.Do(func() {
		c := jsonschema.NewCompiler()
		schemas.session, schemas.err = c.Compile(filepath.Join(dir, "session.schema.json"))
		if schemas.err == nil {
			schemas.expect, schemas.err = c.Compile(filepath.Join(dir, "expected-state.schema.json"))
		}
	})
	if schemas.err != nil {
		t.Fatalf("compile schemas: %v", schemas.err)
	}
	return schemas.session, schemas.expect
}

// validateJSON validates one JSON text against a schema.
func validateJSON(sch *jsonschema.Schema, text []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// committedLines returns the non-empty lines before the final LF.
func committedLines(data []byte) [][]byte {
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil
	}
	var out [][]byte
	for _, l := range bytes.Split(data[:end], []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// assertJSONEqual compares two JSON texts semantically and reports every
// differing path.
func assertJSONEqual(t testing.TB, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	if reflect.DeepEqual(g, w) {
		return
	}
	var diffs []string
	jsonDiff("$", g, w, &diffs)
	t.Errorf("JSON differs:\n  %s\ngot:  %s", strings.Join(diffs, "\n  "), got)
}

func jsonDiff(path string, got, want any, out *[]string) {
	if len(*out) > 20 {
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			gv, gok := g[k]
			wv, wok := w[k]
			switch {
			case !gok:
				*out = append(*out, fmt.Sprintf("%s.%s: missing, want %s", path, k, short(wv)))
			case !wok:
				*out = append(*out, fmt.Sprintf("%s.%s: unexpected %s", path, k, short(gv)))
			default:
				jsonDiff(path+"."+k, gv, wv, out)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		for i := range w {
			jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], out)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		*out = append(*out, fmt.Sprintf("%s: got %s, want %s", path, short(got), short(want)))
	}
}

func short(v any) string {
	b, _ := json.Marshal(v, json.Deterministic(true))
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// readFile reads a test file or fails.
func readTestFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
