package mcp

import (
	"context"
	"fmt"

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
	// Schema is the requested schema as the server sent it, for a client
	// that renders the form itself (ACP's elicitation/create).
	Schema jsontext.Value
}

// Field is one member of a form.
type Field struct {
	Name        string
	Title       string
	Description string
	Type        string   // string, number, integer or boolean
	Enum        []string // a string field's allowed values, when any
	// EnumTitles are the values' titles (titled enums), by index; nil or
	// "" where a value has none.
	EnumTitles []string
	// Multi is a multi-select enum (an array of strings from Enum).
	Multi    bool
	Required bool
	Default  any // nil, or a value of Type ([]string when Multi)

	// The schema's constraints, nil when absent.
	Format               string // email, uri, date or date-time
	MinLength, MaxLength *int
	Minimum, Maximum     *float64
	MinItems, MaxItems   *int
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
