package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The restricted JSON Schema of an elicitation form (MCP 2025-11-25):
// a flat object of strings (with a format, lengths, or an enum, titled by
// oneOf or the legacy enumNames), numbers and integers (with a range),
// booleans, and arrays of enum strings (multi-select, titled by anyOf).

type schemaDoc struct {
	Type       string                  `json:"type"`
	Properties jsonObject[propertyDoc] `json:"properties"`
	Required   []string                `json:"required"`
}

type propertyDoc struct {
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Enum        []string       `json:"enum"`
	EnumNames   []string       `json:"enumNames"`
	OneOf       []enumOption   `json:"oneOf"`
	Items       *itemsDoc      `json:"items"`
	Format      string         `json:"format"`
	MinLength   *int           `json:"minLength"`
	MaxLength   *int           `json:"maxLength"`
	Minimum     *float64       `json:"minimum"`
	Maximum     *float64       `json:"maximum"`
	MinItems    *int           `json:"minItems"`
	MaxItems    *int           `json:"maxItems"`
	Default     jsontext.Value `json:"default"`
}

type enumOption struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// itemsDoc is a multi-select's items: an enum, or anyOf titled values.
type itemsDoc struct {
	Type  string       `json:"type"`
	Enum  []string     `json:"enum"`
	AnyOf []enumOption `json:"anyOf"`
}

// jsonObject keeps the order of an object's members.
type jsonObject[T any] struct {
	names  []string
	values map[string]T
}

func (o *jsonObject[T]) UnmarshalJSON(data []byte) error {
	var raw map[string]jsontext.Value
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	o.values = make(map[string]T, len(raw))
	for name, v := range raw {
		var t T
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		o.values[name] = t
	}
	o.names = memberOrder(data)
	return nil
}

// memberOrder lists the top-level member names of a JSON object in order.
func memberOrder(data []byte) []string {
	var names []string
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if _, err := dec.ReadToken(); err != nil {
		return nil
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return names
		}
		names = append(names, tok.String())
		if err := dec.SkipValue(); err != nil {
			return names
		}
	}
	return names
}

// ParseForm reads an elicitation's requested schema. Defaults of the wrong
// type, or outside the field's constraints, are dropped: accepting the
// form as it is must send valid content.
func ParseForm(server, message string, schema []byte) (Form, error) {
	f := Form{Server: server, Message: message}
	if len(schema) == 0 || string(schema) == "null" {
		return f, nil
	}
	var doc schemaDoc
	if err := json.Unmarshal(schema, &doc); err != nil {
		return Form{}, fmt.Errorf("the form's schema: %w", err)
	}
	if doc.Type != "" && doc.Type != "object" {
		return Form{}, errors.New("the form's schema is not an object")
	}
	f.Schema = append(jsontext.Value(nil), schema...)
	for _, name := range doc.Properties.names {
		fl, err := parseField(name, doc.Properties.values[name], slices.Contains(doc.Required, name))
		if err != nil {
			return Form{}, err
		}
		f.Fields = append(f.Fields, fl)
	}
	return f, nil
}

func parseField(name string, p propertyDoc, required bool) (Field, error) {
	fl := Field{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Required: required,
		Format: p.Format, MinLength: p.MinLength, MaxLength: p.MaxLength, Minimum: p.Minimum, Maximum: p.Maximum,
		MinItems: p.MinItems, MaxItems: p.MaxItems}
	fl.Enum, fl.EnumTitles = p.Enum, p.EnumNames
	if len(fl.EnumTitles) != len(fl.Enum) {
		fl.EnumTitles = nil
	}
	fl.addOptions(p.OneOf)
	switch fl.Type {
	case "string", "number", "integer", "boolean":
	case "array":
		if p.Items == nil || (len(p.Items.Enum) == 0 && len(p.Items.AnyOf) == 0) {
			return Field{}, fmt.Errorf("field %q is an array without enum items", name)
		}
		fl.Type, fl.Multi = "string", true
		fl.Enum, fl.EnumTitles = p.Items.Enum, nil
		fl.addOptions(p.Items.AnyOf)
	default:
		return Field{}, fmt.Errorf("field %q has the unsupported type %q", name, fl.Type)
	}
	fl.Default = fl.parseDefault(p.Default)
	return fl, nil
}

// addOptions appends titled values (oneOf / anyOf consts).
func (f *Field) addOptions(opts []enumOption) {
	if len(opts) == 0 {
		return
	}
	if f.EnumTitles == nil {
		f.EnumTitles = make([]string, len(f.Enum))
	}
	for _, o := range opts {
		f.Enum = append(f.Enum, o.Const)
		f.EnumTitles = append(f.EnumTitles, o.Title)
	}
}

// parseDefault is the schema's default as a valid value of the field, or
// nil.
func (f Field) parseDefault(raw jsontext.Value) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if f.Multi {
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			return nil
		}
		v = list
	} else {
		var x any
		if json.Unmarshal(raw, &x) != nil {
			return nil
		}
		if _, isList := x.([]any); isList || x == nil {
			return nil
		}
		if _, isObject := x.(map[string]any); isObject {
			return nil
		}
		var err error
		if v, err = f.Parse(fmt.Sprint(x)); err != nil {
			return nil
		}
	}
	if f.Check(v) != nil {
		return nil
	}
	return v
}

// Parse turns what the user typed into a valid value of the field; a
// multi-select takes its values separated by commas.
func (f Field) Parse(text string) (any, error) {
	v, err := f.parse(text)
	if err != nil {
		return nil, err
	}
	if err := f.Check(v); err != nil {
		return nil, err
	}
	return v, nil
}

func (f Field) parse(text string) (any, error) {
	if f.Multi {
		out := []string{}
		for _, s := range strings.Split(text, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(text) {
		case "true", "yes", "y":
			return true, nil
		case "false", "no", "n":
			return false, nil
		}
		return nil, errors.New("answer yes or no")
	case "integer":
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			if x, ferr := strconv.ParseFloat(text, 64); ferr == nil && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
			return nil, errors.New("a whole number, please")
		}
		return n, nil
	case "number":
		x, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, errors.New("a number, please")
		}
		return x, nil
	}
	return text, nil
}

// Check says why v breaks the field's constraints, nil when it does not.
func (f Field) Check(v any) error {
	switch v := v.(type) {
	case []string:
		return f.checkItems(v)
	case string:
		return f.checkString(v)
	case int64:
		return f.checkRange(float64(v))
	case float64:
		return f.checkRange(v)
	}
	return nil
}

func (f Field) checkString(s string) error {
	if len(f.Enum) > 0 && !slices.Contains(f.Enum, s) {
		return fmt.Errorf("one of: %s", strings.Join(f.Enum, ", "))
	}
	n := utf8.RuneCountInString(s)
	switch {
	case f.MinLength != nil && n < *f.MinLength:
		return fmt.Errorf("at least %d characters", *f.MinLength)
	case f.MaxLength != nil && n > *f.MaxLength:
		return fmt.Errorf("at most %d characters", *f.MaxLength)
	}
	return checkFormat(f.Format, s)
}

// checkFormat checks the four formats a form may ask for.
func checkFormat(format, s string) error {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return errors.New("an email address, such as ada@example.com")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return errors.New("a URI with its scheme, such as https://example.com")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return errors.New("a date, YYYY-MM-DD")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return errors.New("a date and time, such as 2026-01-02T15:04:05Z")
		}
	}
	return nil
}

func (f Field) checkRange(x float64) error {
	switch {
	case f.Minimum != nil && x < *f.Minimum:
		return fmt.Errorf("at least %s", num(*f.Minimum))
	case f.Maximum != nil && x > *f.Maximum:
		return fmt.Errorf("at most %s", num(*f.Maximum))
	}
	return nil
}

func (f Field) checkItems(list []string) error {
	for i, s := range list {
		if !slices.Contains(f.Enum, s) {
			return fmt.Errorf("each one of: %s", strings.Join(f.Enum, ", "))
		}
		if slices.Contains(list[:i], s) {
			return fmt.Errorf("%s is chosen twice", s)
		}
	}
	switch {
	case f.MinItems != nil && len(list) < *f.MinItems:
		return fmt.Errorf("choose at least %d", *f.MinItems)
	case f.MaxItems != nil && len(list) > *f.MaxItems:
		return fmt.Errorf("choose at most %d", *f.MaxItems)
	}
	return nil
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Text is v as the user would type it (Parse's inverse).
func (f Field) Text(v any) string {
	if list, ok := v.([]string); ok {
		return strings.Join(list, ", ")
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// OptionLabel is the title of the enum value i, else the value.
func (f Field) OptionLabel(i int) string {
	if i < len(f.EnumTitles) && f.EnumTitles[i] != "" {
		return f.EnumTitles[i]
	}
	return f.Enum[i]
}

// Hint describes the field's constraints briefly: "integer, 0 to 150",
// "email", "2 to 40 characters".
func (f Field) Hint() string {
	var parts []string
	switch {
	case f.Multi:
		parts = append(parts, "choose any")
		if r := span(f.MinItems, f.MaxItems, ""); r != "" {
			parts[0] = "choose " + r
		}
	case len(f.Enum) > 0:
	case f.Type == "integer" || f.Type == "number":
		parts = append(parts, f.Type)
		if r := spanF(f.Minimum, f.Maximum); r != "" {
			parts = append(parts, r)
		}
	case f.Type == "string":
		if f.Format != "" {
			parts = append(parts, f.Format)
		}
		if r := span(f.MinLength, f.MaxLength, " characters"); r != "" {
			parts = append(parts, r)
		}
	}
	return strings.Join(parts, ", ")
}

func span(lo, hi *int, unit string) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%d to %d%s", *lo, *hi, unit)
	case lo != nil:
		return fmt.Sprintf("at least %d%s", *lo, unit)
	case hi != nil:
		return fmt.Sprintf("at most %d%s", *hi, unit)
	}
	return ""
}

func spanF(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return num(*lo) + " to " + num(*hi)
	case lo != nil:
		return "at least " + num(*lo)
	case hi != nil:
		return "at most " + num(*hi)
	}
	return ""
}
