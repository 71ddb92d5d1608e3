package tools

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Argument validation. Tool definitions are not strict, so the host checks
// every field itself and answers a bad one with the exact tools.md message
// as an error Result.

// toolError is a failure whose text is model-facing and exact (so it may
// read like a sentence, unlike a Go error string).
type toolError string

func (e toolError) Error() string { return string(e) }

// failf formats a toolError.
func failf(format string, a ...any) error { return toolError(fmt.Sprintf(format, a...)) }

// errNotObject is reported when arguments cannot be decoded as an object
// (the caller normally rejects these before Run).
const errNotObject toolError = "Tool arguments must be a JSON object."

// decodeArgs decodes the argument object into a struct of jsontext.Value
// fields, so that each field can be type-checked with its own message.
func decodeArgs(args jsontext.Value, dst any) error {
	if args.Kind() != '{' {
		return errNotObject
	}
	if err := json.Unmarshal(args, dst); err != nil {
		return errNotObject
	}
	return nil
}

// absent reports whether an optional field was omitted or null.
func absent(v jsontext.Value) bool {
	return len(v) == 0 || v.Kind() == 'n'
}

// stringValue decodes v if it is a JSON string.
func stringValue(v jsontext.Value) (string, bool) {
	if len(v) == 0 || v.Kind() != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// nonEmptyString returns field name as a nonempty string.
func nonEmptyString(name string, v jsontext.Value) (string, error) {
	s, ok := stringValue(v)
	if !ok || s == "" {
		return "", failf("%s must be a nonempty string", name)
	}
	return s, nil
}

// anyString returns field name as a string, which may be empty.
func anyString(name string, v jsontext.Value) (string, error) {
	s, ok := stringValue(v)
	if !ok {
		return "", failf("%s must be a string", name)
	}
	return s, nil
}

// numberValue decodes v if it is a JSON number.
func numberValue(v jsontext.Value) (float64, bool) {
	if len(v) == 0 || v.Kind() != '0' {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, !math.IsNaN(f)
}

// optionalCount returns field name as an integer >= 1, or def when the
// field is absent. Integral floats such as 3.0 are accepted; huge values are
// clamped to 2^53, far beyond any limit the tools apply.
func optionalCount(name string, v jsontext.Value, def int) (int, error) {
	if absent(v) {
		return def, nil
	}
	f, ok := numberValue(v)
	if !ok || f < 1 || f != math.Trunc(f) {
		return 0, failf("%s must be an integer >= 1", name)
	}
	return int(min(f, 1<<53)), nil
}

// optionalSeconds returns field name as a positive number of seconds, or
// def when it is absent.
func optionalSeconds(name string, v jsontext.Value, def float64) (float64, error) {
	if absent(v) {
		return def, nil
	}
	f, ok := numberValue(v)
	if !ok || f <= 0 || math.IsInf(f, 0) {
		return 0, failf("%s must be a positive number of seconds", name)
	}
	return f, nil
}

// errorResult turns an error into the error Result the model sees.
func errorResult(err error) Result {
	return Result{Content: err.Error(), IsError: true}
}
