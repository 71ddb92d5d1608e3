package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// An MCP server's form (elicitation) goes to the editor as ACP's own
// elicitation/create when the client announces form elicitation
// (clientCapabilities.elicitation.form), so the user fills it in there.
// Otherwise it becomes a permission request, the only question every
// client answers: a form of one boolean or enum field offers its values as
// the options; any other form offers to send its defaults, or only to
// decline when a required field has none.

// clientForms reports whether the client fills in forms itself.
func (srv *server) clientForms() bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	e := srv.client.Elicitation
	return e != nil && e.Form != nil
}

// elicit puts an MCP server's form to the editor.
func (s *sess) elicit(ctx context.Context, f mcp.Form) (mcp.ElicitAnswer, error) {
	if s.id == "" {
		// The session is still being opened: there is nothing to attach
		// the question to yet.
		return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
	}
	if s.srv.clientForms() {
		return s.elicitForm(ctx, f)
	}
	return s.elicitByPermission(ctx, f)
}

// elicitForm sends elicitation/create, scoped to the session.
func (s *sess) elicitForm(ctx context.Context, f mcp.Form) (mcp.ElicitAnswer, error) {
	schema := json.RawMessage(f.Schema)
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	params := map[string]any{
		"sessionId":       s.id,
		"mode":            "form",
		"message":         "MCP server " + f.Server + " asks: " + f.Message,
		"requestedSchema": schema,
	}
	if id := s.callOf(f.Server); id != "" {
		params["toolCallId"] = id
	}
	raw, err := s.srv.calls.call(ctx, "elicitation/create", params)
	var ce *callError
	switch {
	case err != nil && ctx.Err() != nil:
		return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
	case errors.As(err, &ce) && ce.Code == methodNotFound:
		// It announced forms but has no handler: ask the other way.
		return s.elicitByPermission(ctx, f)
	case err != nil:
		return mcp.ElicitAnswer{}, err
	}
	var resp struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return mcp.ElicitAnswer{}, fmt.Errorf("the editor's answer to the form: %w", err)
	}
	switch resp.Action {
	case mcp.ElicitDecline, mcp.ElicitCancel:
		return mcp.ElicitAnswer{Action: resp.Action}, nil
	case mcp.ElicitAccept:
		content, err := typedContent(f, resp.Content)
		if err != nil {
			return mcp.ElicitAnswer{}, fmt.Errorf("the editor's answer to the form: %w", err)
		}
		return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: content}, nil
	}
	return mcp.ElicitAnswer{}, fmt.Errorf("the editor answered the form with the unknown action %q", resp.Action)
}

// callOf is the id of the one call of server's tools under way, which a
// form of server most likely belongs to; "" when there is none or several.
func (s *sess) callOf(server string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := ""
	for id, display := range s.calls {
		if strings.HasPrefix(display, mcp.Display(server, "")) {
			if found != "" {
				return ""
			}
			found = id
		}
	}
	return found
}

// typedContent checks an accepted form's content against its fields and
// gives integers back their type (JSON numbers decode as float64).
func typedContent(f mcp.Form, content map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for _, fl := range f.Fields {
		v, ok := content[fl.Name]
		if !ok || v == nil {
			if fl.Required {
				return nil, fmt.Errorf("%s is required", fl.Name)
			}
			continue
		}
		switch x := v.(type) {
		case float64:
			if fl.Type == "integer" {
				if x != math.Trunc(x) || math.Abs(x) >= 1<<53 {
					return nil, fmt.Errorf("%s: a whole number, please", fl.Name)
				}
				v = int64(x)
			}
		case []any:
			list := make([]string, len(x))
			for i, e := range x {
				s, _ := e.(string)
				list[i] = s
			}
			v = list
		}
		if err := fl.Check(v); err != nil {
			return nil, fmt.Errorf("%s: %w", fl.Name, err)
		}
		out[fl.Name] = v
	}
	return out, nil
}

// formOption is one permission option and the answer it stands for.
type formOption struct {
	option acpsdk.PermissionOption
	answer mcp.ElicitAnswer
}

// formOptions are what a permission request can offer for f.
func formOptions(f mcp.Form) []formOption {
	decline := formOption{acpsdk.PermissionOption{OptionId: "decline", Name: "Decline", Kind: acpsdk.PermissionOptionKindRejectOnce}, mcp.ElicitAnswer{Action: mcp.ElicitDecline}}
	if len(f.Fields) == 1 && !f.Fields[0].Multi {
		fl := f.Fields[0]
		var opts []formOption
		switch {
		case len(fl.Enum) > 0:
			for i, v := range fl.Enum {
				opts = append(opts, valueOption(fl, "value-"+strconv.Itoa(i), fl.OptionLabel(i), v))
			}
		case fl.Type == "boolean":
			opts = append(opts, valueOption(fl, "yes", "Yes", true), valueOption(fl, "no", "No", false))
		}
		if len(opts) > 0 {
			return append(opts, decline)
		}
	}
	d := f.Defaults()
	for _, fl := range f.Fields {
		if _, ok := d[fl.Name]; fl.Required && !ok {
			decline.option.Name = "Decline (" + fl.Label() + " is required and has no default; this editor cannot fill in forms)"
			return []formOption{decline}
		}
	}
	send := formOption{acpsdk.PermissionOption{OptionId: "send-defaults", Name: sendName(f, d), Kind: acpsdk.PermissionOptionKindAllowOnce}, mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: d}}
	return []formOption{send, decline}
}

func valueOption(fl mcp.Field, id, name string, v any) formOption {
	return formOption{acpsdk.PermissionOption{OptionId: acpsdk.PermissionOptionId(id), Name: name, Kind: acpsdk.PermissionOptionKindAllowOnce},
		mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: map[string]any{fl.Name: v}}}
}

// sendName says what sending the defaults sends.
func sendName(f mcp.Form, d map[string]any) string {
	var parts []string
	for _, fl := range f.Fields {
		if v, ok := d[fl.Name]; ok {
			parts = append(parts, fl.Label()+"="+fl.Text(v))
		}
	}
	if len(parts) == 0 {
		return "Send an empty answer"
	}
	return "Send " + strings.Join(parts, ", ")
}

// formSeq numbers the tool calls that show forms.
var formSeq atomic.Int64

// elicitByPermission asks with session/request_permission, shown as a tool
// call of its own: the client's cancel of the question cancels the form.
func (s *sess) elicitByPermission(ctx context.Context, f mcp.Form) (mcp.ElicitAnswer, error) {
	opts := formOptions(f)
	id := acpsdk.ToolCallId(fmt.Sprintf("mcp-form-%d", formSeq.Add(1)))
	title := "MCP server " + f.Server + " asks: " + f.Message
	s.update(acpsdk.StartToolCall(id, title, acpsdk.WithStartKind(acpsdk.ToolKindOther), acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending)))
	s.flush()
	options := make([]acpsdk.PermissionOption, len(opts))
	for i, o := range opts {
		options[i] = o.option
	}
	resp, err := s.srv.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(s.id),
		ToolCall:  acpsdk.ToolCallUpdate{ToolCallId: id, Title: &title},
		Options:   options,
	})
	ans := mcp.ElicitAnswer{Action: mcp.ElicitCancel}
	if err == nil && resp.Outcome.Selected != nil {
		for _, o := range opts {
			if o.option.OptionId == resp.Outcome.Selected.OptionId {
				ans = o.answer
			}
		}
	}
	status := acpsdk.ToolCallStatusCompleted
	if ans.Action != mcp.ElicitAccept {
		status = acpsdk.ToolCallStatusFailed
	}
	s.update(acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(status)))
	if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		return mcp.ElicitAnswer{}, err
	}
	return ans, nil
}
