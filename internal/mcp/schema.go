package mcp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Limits on what a server may list (mcp.md "Tools").
const (
	MaxToolsPerServer   = 64
	MaxDescriptionBytes = 8 << 10
	MaxInputSchemaBytes = 50 << 10
	MaxInputSchemaDepth = 20
)

// isAnnotation reports annotation keywords: they change nothing about which
// arguments are valid, and real servers put them everywhere (descriptions
// help the model most), so they are accepted next to the shared subset.
func isAnnotation(k string) bool {
	switch k {
	case "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "format":
		return true
	}
	return false
}

// validateInputSchema checks a tool's input schema and returns it as compact
// JSON: an object with "type":"object", at most MaxInputSchemaBytes and
// MaxInputSchemaDepth levels deep, using only the shared keyword subset of
// mcp.md (plus annotations, and "$schema" at the root).
func validateInputSchema(schema any) (jsontext.Value, error) {
	if schema == nil {
		return nil, errors.New("input schema is missing")
	}
	raw, err := json.Marshal(schema, json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	if len(raw) > MaxInputSchemaBytes {
		return nil, fmt.Errorf("input schema is %d bytes (at most %d)", len(raw), MaxInputSchemaBytes)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	if d := depth(tree); d > MaxInputSchemaDepth {
		return nil, fmt.Errorf("input schema is nested %d levels deep (at most %d)", d, MaxInputSchemaDepth)
	}
	root, ok := tree.(map[string]any)
	if !ok {
		return nil, errors.New("input schema must be an object")
	}
	if root["type"] != "object" {
		return nil, errors.New(`input schema must have "type": "object"`)
	}
	if s, ok := root["$schema"]; ok {
		if _, isString := s.(string); !isString {
			return nil, errors.New(`input schema "$schema" must be a string`)
		}
	}
	if err := checkSchema(root, "", true); err != nil {
		return nil, err
	}
	return jsontext.Value(raw), nil
}

// depth is the JSON nesting depth of v: a scalar is 0, {} or [] is 1.
func depth(v any) int {
	deepest := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			deepest = max(deepest, depth(e))
		}
	case []any:
		for _, e := range v {
			deepest = max(deepest, depth(e))
		}
	default:
		return 0
	}
	return deepest + 1
}

func checkSchema(v any, at string, root bool) error {
	m, ok := v.(map[string]any)
	if !ok {
		return schemaErr(at, "a schema must be an object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic first error
	for _, k := range keys {
		known, err := checkKeyword(k, m[k], at+"/"+escapePointer(k))
		switch {
		case err != nil:
			return err
		case known, isAnnotation(k):
		case k == "$schema" && root:
		default:
			return schemaErr(at, fmt.Sprintf("unsupported keyword %q", k))
		}
	}
	return nil
}

func isJSONType(s string) bool {
	switch s {
	case "object", "array", "string", "number", "integer", "boolean", "null":
		return true
	}
	return false
}

// checkKeyword checks one keyword of the shared subset of mcp.md; known is
// false for any other keyword.
func checkKeyword(k string, v any, at string) (known bool, err error) {
	switch k {
	case "type":
		return true, checkType(v, at)
	case "properties":
		return true, checkProperties(v, at)
	case "required":
		return true, checkRequired(v, at)
	case "additionalProperties", "items":
		return true, checkBoolOrSchema(v, at)
	case "enum":
		return true, checkEnum(v, at)
	case "const":
		return true, nil
	case "oneOf":
		return true, checkOneOf(v, at)
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		return true, checkNumber(v, at)
	case "minLength", "maxLength", "minItems", "maxItems":
		return true, checkCount(v, at)
	case "pattern":
		return true, checkString(v, at)
	}
	return false, nil
}

func checkType(v any, at string) error {
	switch v := v.(type) {
	case string:
		if isJSONType(v) {
			return nil
		}
	case []any:
		if len(v) == 0 {
			break
		}
		seen := make(map[string]bool, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok || !isJSONType(s) || seen[s] {
				return schemaErr(at, "must be a JSON type name or a list of distinct ones")
			}
			seen[s] = true
		}
		return nil
	}
	return schemaErr(at, "must be a JSON type name or a list of distinct ones")
}

func checkProperties(v any, at string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return schemaErr(at, "must be an object")
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := checkSchema(m[name], at+"/"+escapePointer(name), false); err != nil {
			return err
		}
	}
	return nil
}

func checkRequired(v any, at string) error {
	list, ok := v.([]any)
	if !ok {
		return schemaErr(at, "must be an array of strings")
	}
	for _, e := range list {
		if _, ok := e.(string); !ok {
			return schemaErr(at, "must be an array of strings")
		}
	}
	return nil
}

func checkBoolOrSchema(v any, at string) error {
	if _, ok := v.(bool); ok {
		return nil
	}
	return checkSchema(v, at, false)
}

func checkEnum(v any, at string) error {
	if list, ok := v.([]any); ok && len(list) > 0 {
		return nil
	}
	return schemaErr(at, "must be a nonempty array")
}

func checkOneOf(v any, at string) error {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return schemaErr(at, "must be a nonempty array of schemas")
	}
	for i, e := range list {
		if err := checkSchema(e, fmt.Sprintf("%s/%d", at, i), false); err != nil {
			return err
		}
	}
	return nil
}

func checkNumber(v any, at string) error {
	if _, ok := v.(float64); ok {
		return nil
	}
	return schemaErr(at, "must be a number")
}

func checkCount(v any, at string) error {
	if f, ok := v.(float64); ok && f >= 0 && f == math.Trunc(f) && f <= 1<<53 {
		return nil
	}
	return schemaErr(at, "must be a non-negative integer")
}

func checkString(v any, at string) error {
	if _, ok := v.(string); ok {
		return nil
	}
	return schemaErr(at, "must be a string")
}

func schemaErr(at, msg string) error {
	if at == "" {
		at = "/"
	}
	return fmt.Errorf("input schema at %s: %s", at, msg)
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
