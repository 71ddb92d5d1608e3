package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidateInputSchemaAccepts(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false}`,
		`{"type":"object","title":"T","description":"D","properties":{
			"s":{"type":"string","minLength":1,"maxLength":10,"pattern":"^a","format":"uri","default":"a"},
			"n":{"type":["number","null"],"minimum":0,"maximum":1.5,"exclusiveMinimum":-1,"exclusiveMaximum":2},
			"e":{"enum":["a",1,null]},
			"c":{"const":{"any":["thing",{"$ref":"data, not a keyword"}]}},
			"a":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]},"minItems":0,"maxItems":3},
			"o":{"oneOf":[{"type":"string"},{"type":"integer","examples":[1]}]},
			"f":{"type":"object","additionalProperties":{"type":"boolean"},"deprecated":true,"readOnly":false,"writeOnly":false,"$comment":"c"}
		},"required":["s"]}`,
	} {
		if _, err := validateInputSchema(json.RawMessage(schema)); err != nil {
			t.Errorf("rejected %s: %v", schema, err)
		}
	}
}

func TestValidateInputSchemaIsCompactAndDeterministic(t *testing.T) {
	a, err := validateInputSchema(map[string]any{"type": "object", "properties": map[string]any{"b": map[string]any{}, "a": map[string]any{}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != `{"properties":{"a":{},"b":{}},"type":"object"}` {
		t.Errorf("got %s", a)
	}
}

func TestValidateInputSchemaRejects(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`null`, "must be an object"},
		{`[]`, "must be an object"},
		{`"object"`, "must be an object"},
		{`{}`, `must have "type": "object"`},
		{`{"type":"array"}`, `must have "type": "object"`},
		{`{"type":["object"]}`, `must have "type": "object"`},
		{`{"type":"object","$ref":"#/x"}`, `input schema at /: unsupported keyword "$ref"`},
		{`{"type":"object","$defs":{}}`, `unsupported keyword "$defs"`},
		{`{"type":"object","anyOf":[{}]}`, `unsupported keyword "anyOf"`},
		{`{"type":"object","allOf":[{}]}`, `unsupported keyword "allOf"`},
		{`{"type":"object","not":{}}`, `unsupported keyword "not"`},
		{`{"type":"object","patternProperties":{}}`, `unsupported keyword "patternProperties"`},
		{`{"type":"object","x-mcp-header":"h"}`, `unsupported keyword "x-mcp-header"`},
		{`{"type":"object","properties":{"a":{"$schema":"x"}}}`, `at /properties/a: unsupported keyword "$schema"`},
		{`{"type":"object","$schema":1}`, `"$schema" must be a string`},
		{`{"type":"object","properties":{"a/b":{"if":{}}}}`, `at /properties/a~1b: unsupported keyword "if"`},
		{`{"type":"object","properties":{"a":{"items":{"then":{}}}}}`, `at /properties/a/items: unsupported keyword "then"`},
		{`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"dependentRequired":{}}]}}}`, `at /properties/a/oneOf/1: unsupported keyword`},
		{`{"type":"object","additionalProperties":{"unevaluatedProperties":false}}`, `at /additionalProperties: unsupported keyword`},
		{`{"type":"object","properties":[]}`, "/properties: must be an object"},
		{`{"type":"object","properties":{"a":true}}`, "/properties/a: a schema must be an object"},
		{`{"type":"object","required":"a"}`, "/required: must be an array of strings"},
		{`{"type":"object","required":[1]}`, "/required: must be an array of strings"},
		{`{"type":"object","properties":{"a":{"type":"text"}}}`, "/properties/a/type: must be a JSON type name"},
		{`{"type":"object","properties":{"a":{"type":["string","string"]}}}`, "/properties/a/type: must be a JSON type name"},
		{`{"type":"object","properties":{"a":{"type":[]}}}`, "/properties/a/type: must be a JSON type name"},
		{`{"type":"object","properties":{"a":{"enum":[]}}}`, "/properties/a/enum: must be a nonempty array"},
		{`{"type":"object","properties":{"a":{"oneOf":[]}}}`, "/properties/a/oneOf: must be a nonempty array of schemas"},
		{`{"type":"object","properties":{"a":{"minimum":"1"}}}`, "/properties/a/minimum: must be a number"},
		{`{"type":"object","properties":{"a":{"exclusiveMinimum":true}}}`, "/properties/a/exclusiveMinimum: must be a number"},
		{`{"type":"object","properties":{"a":{"minLength":-1}}}`, "/properties/a/minLength: must be a non-negative integer"},
		{`{"type":"object","properties":{"a":{"maxItems":1.5}}}`, "/properties/a/maxItems: must be a non-negative integer"},
		{`{"type":"object","properties":{"a":{"pattern":1}}}`, "/properties/a/pattern: must be a string"},
		{`{"type":"object","description":"` + strings.Repeat("x", MaxInputSchemaBytes) + `"}`, "bytes (at most 51200)"},
	}
	for _, tt := range tests {
		_, err := validateInputSchema(json.RawMessage(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			s := tt.schema
			if len(s) > 80 {
				s = s[:80]
			}
			t.Errorf("%s: err = %v, want %q", s, err, tt.want)
		}
	}
}

func TestValidateInputSchemaMissing(t *testing.T) {
	if _, err := validateInputSchema(nil); err == nil || err.Error() != "input schema is missing" {
		t.Errorf("err = %v", err)
	}
}

func TestValidateInputSchemaDepth(t *testing.T) {
	// The root object is level 1; properties, a property and its items add
	// one level each.
	nest := func(levels int) string {
		s := `{"type":"string"}`
		for range levels {
			s = `{"type":"array","items":` + s + `}`
		}
		return s
	}
	// Root (1) + "properties" object (2) + property schema chain.
	ok := `{"type":"object","properties":{"a":` + nest(MaxInputSchemaDepth-3) + `}}`
	if _, err := validateInputSchema(json.RawMessage(ok)); err != nil {
		t.Errorf("depth %d rejected: %v", MaxInputSchemaDepth, err)
	}
	deep := `{"type":"object","properties":{"a":` + nest(MaxInputSchemaDepth-2) + `}}`
	if _, err := validateInputSchema(json.RawMessage(deep)); err == nil || !strings.Contains(err.Error(), "nested 21 levels deep (at most 20)") {
		t.Errorf("depth %d: err = %v", MaxInputSchemaDepth+1, err)
	}
}

func FuzzValidateInputSchema(f *testing.F) {
	for _, seed := range []string{
		objectSchema,
		`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"enum":[1]}]}},"additionalProperties":false}`,
		`{"type":"object","$ref":"#"}`,
		`{"type":"object","const":[[[[[]]]]]}`,
		`[]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		var v any
		if json.Unmarshal([]byte(schema), &v) != nil {
			return
		}
		out, err := validateInputSchema(v)
		if err != nil {
			return
		}
		if len(out) > MaxInputSchemaBytes {
			t.Fatalf("accepted %d bytes", len(out))
		}
		var back any
		if err := json.Unmarshal(out, &back); err != nil || depth(back) > MaxInputSchemaDepth {
			t.Fatalf("accepted output %s: %v", out, err)
		}
		if m, ok := back.(map[string]any); !ok || m["type"] != "object" {
			t.Fatalf("accepted non-object schema %s", out)
		}
		// Validation is stable: the output validates to itself.
		again, err := validateInputSchema(back)
		if err != nil || string(again) != string(out) {
			t.Fatalf("revalidation %s -> %s, %v", out, again, err)
		}
	})
}
