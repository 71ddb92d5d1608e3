package ui

import (
	"errors"
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// argMember is one top-level member of a tool call's argument object.
type argMember struct {
	name  string
	value jsontext.Value
}

// summaryKeys are the argument names that best say what a call does, in
// order of preference, for tools without a rule of their own.
var summaryKeys = []string{"command", "path", "file_path", "file", "url", "query", "pattern", "name", "id"}

// shortArgs summarizes a call's argument JSON on one line of at most width
// cells: the command for bash, the path for read/write/edit, the action and
// its target for bg, the most telling string member for other tools, else
// the compact JSON. Arguments that are not an object are shown as text.
func shortArgs(tool, args string, width int) string {
	members, ok := parseArgs(args)
	if !ok {
		return truncate(sanitizeLine(args), width)
	}
	var s string
	switch tool {
	case "bash":
		s = stringMember(members, "command")
	case "read", "write", "edit":
		s = stringMember(members, "path")
	case "bg":
		s = strings.TrimSpace(stringMember(members, "action") + " " + firstString(members, "command", "id"))
	}
	if s == "" {
		s = firstString(members, summaryKeys...)
	}
	if s == "" {
		s = compactJSON(args)
	}
	return truncate(sanitizeLine(s), width)
}

// parseArgs reads the members of a JSON object in their order. ok is false
// when args is not one well-formed object.
func parseArgs(args string) ([]argMember, bool) {
	dec := jsontext.NewDecoder(strings.NewReader(args))
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '{' {
		return nil, false
	}
	var members []argMember
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		name := tok.String() // the token is only valid until the next read
		val, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		members = append(members, argMember{name: name, value: val.Clone()})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, false
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, false // trailing data after the object
	}
	return members, true
}

// stringMember is the value of the string member name, "" when absent or
// not a string.
func stringMember(members []argMember, name string) string {
	for _, m := range members {
		if m.name != name || m.value.Kind() != '"' {
			continue
		}
		var s string
		if json.Unmarshal(m.value, &s) == nil {
			return s
		}
	}
	return ""
}

func firstString(members []argMember, names ...string) string {
	for _, n := range names {
		if s := stringMember(members, n); s != "" {
			return s
		}
	}
	return ""
}

func compactJSON(args string) string {
	v := jsontext.Value(args)
	if err := v.Compact(); err != nil {
		return args
	}
	return string(v)
}
