package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation actions (MCP elicitation/create results).
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// Form is a server's request for input (elicitation/create, form mode):
// its message and the flat object schema's fields, in the schema's order.
type Form struct {
	Server  string
	Message string
	Fields  []Field
}

// Field is one member of a form.
type Field struct {
	Name        string
	Title       string
	Description string
	Type        string   // string, number, integer or boolean
	Enum        []string // a string field's allowed values, when any
	Required    bool
	Default     any // nil, or a value of Type
}

// Label is the title, else the name.
func (f Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// ElicitAnswer is the user's answer to a Form.
type ElicitAnswer struct {
	Action  string // ElicitAccept, ElicitDecline or ElicitCancel
	Content map[string]any
}

// ElicitFunc puts a form to the user.
type ElicitFunc func(ctx context.Context, f Form) (ElicitAnswer, error)

// Defaults is the content of a form accepted as it is: every field that
// has a default.
func (f Form) Defaults() map[string]any {
	out := map[string]any{}
	for _, fl := range f.Fields {
		if fl.Default != nil {
			out[fl.Name] = fl.Default
		}
	}
	return out
}

// schemaDoc is the restricted JSON Schema of an elicitation form.
type schemaDoc struct {
	Type       string                  `json:"type"`
	Properties jsonObject[propertyDoc] `json:"properties"`
	Required   []string                `json:"required"`
}

type propertyDoc struct {
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Enum        []string `json:"enum"`
	OneOf       []struct {
		Const string `json:"const"`
	} `json:"oneOf"`
	Default any `json:"default"`
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

// ParseForm reads an elicitation's requested schema: a flat object whose
// properties are strings (with enum or oneOf const), numbers, integers or
// booleans. Defaults of the wrong type are dropped.
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
	for _, name := range doc.Properties.names {
		p := doc.Properties.values[name]
		fl := Field{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Enum: p.Enum, Required: slices.Contains(doc.Required, name)}
		for _, o := range p.OneOf {
			fl.Enum = append(fl.Enum, o.Const)
		}
		switch fl.Type {
		case "string", "number", "integer", "boolean":
		default:
			return Form{}, fmt.Errorf("field %q has the unsupported type %q", name, fl.Type)
		}
		if p.Default != nil {
			if v, err := fl.Parse(fmt.Sprint(p.Default)); err == nil {
				fl.Default = v
			}
		}
		f.Fields = append(f.Fields, fl)
	}
	return f, nil
}

// Parse turns what the user typed into a value of the field's type.
func (f Field) Parse(text string) (any, error) {
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
	if len(f.Enum) > 0 && !slices.Contains(f.Enum, text) {
		return nil, fmt.Errorf("one of: %s", strings.Join(f.Enum, ", "))
	}
	return text, nil
}

// elicitHandler answers a server's elicitation/create: a form goes to ask
// (nil: declined, and notice says so once per request); a URL request is
// declined, tiny-go opens no pages for servers. The calls' timeouts stand
// still while the user answers.
func elicitHandler(alias string, ask ElicitFunc, notice func(string), timers *callTimers) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		p := req.Params
		if p.Mode == "url" {
			return &sdk.ElicitResult{Action: ElicitDecline}, nil
		}
		// A Go map by now: sorted, so a form always shows the same order.
		schema, err := json.Marshal(p.RequestedSchema, json.Deterministic(true))
		if err != nil {
			return nil, err
		}
		form, err := ParseForm(alias, p.Message, schema)
		if err != nil {
			return nil, fmt.Errorf("MCP %s: %w", alias, err)
		}
		if ask == nil {
			if notice != nil {
				notice(fmt.Sprintf("MCP %s asked for input (%s); declined: there is no terminal to answer on", alias, clean(p.Message, "")))
			}
			return &sdk.ElicitResult{Action: ElicitDecline}, nil
		}
		timers.pause()
		ans, err := ask(ctx, form)
		timers.resume()
		if err != nil {
			return nil, err
		}
		res := &sdk.ElicitResult{Action: ans.Action}
		if ans.Action == ElicitAccept {
			res.Content = ans.Content
			if res.Content == nil {
				res.Content = map[string]any{}
			}
		}
		return res, nil
	}
}
