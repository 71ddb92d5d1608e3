package acp

import (
	"encoding/json"
	"path/filepath"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

// call is how a tool call is shown in the editor.
type call struct {
	title     string
	kind      acpsdk.ToolKind
	locations []acpsdk.ToolCallLocation
	content   []acpsdk.ToolCallContent
	rawInput  any
}

// describeCall shows a call of tool (model-facing name) with its raw
// arguments: its kind, a title, the file it touches, and for write and
// edit the diff it would make (computed before the file changes).
func describeCall(tool, display, args, workDir string) call {
	var a struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		Action  string `json:"action"`
		ID      string `json:"id"`
		URL     string `json:"url"`
		Query   string `json:"query"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	var raw any // rawInput: the parsed arguments, nil if they do not parse
	_ = json.Unmarshal([]byte(args), &raw)
	c := call{title: display, kind: acpsdk.ToolKindOther, rawInput: raw}
	if c.title == "" {
		c.title = tool
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) || workDir == "" {
			return p
		}
		return filepath.Join(workDir, p)
	}
	switch tool {
	case "bash":
		c.kind = acpsdk.ToolKindExecute
		if a.Command != "" {
			c.title = firstLine(a.Command)
		}
	case "bg":
		c.kind = acpsdk.ToolKindExecute
		switch {
		case a.Command != "":
			c.title = "bg " + a.Action + ": " + firstLine(a.Command)
		case a.Action != "":
			c.title = strings.TrimSpace("bg " + a.Action + " " + a.ID)
		}
	case "web_search":
		c.kind = acpsdk.ToolKindSearch
		if a.Query != "" {
			c.title = "Search the web: " + firstLine(a.Query)
		}
	case "read":
		c.kind = acpsdk.ToolKindRead
		if a.Path != "" {
			c.title = "Read " + a.Path
			c.locations = []acpsdk.ToolCallLocation{{Path: abs(a.Path)}}
		}
	case "web_fetch":
		c.kind = acpsdk.ToolKindFetch
		if a.URL != "" {
			c.title = "Fetch " + firstLine(a.URL)
		}
	case "write", "edit":
		c.kind = acpsdk.ToolKindEdit
		if a.Path != "" {
			verb := "Write "
			if tool == "edit" {
				verb = "Edit "
			}
			c.title = verb + a.Path
			c.locations = []acpsdk.ToolCallLocation{{Path: abs(a.Path)}}
		}
		if workDir != "" {
			if ch, err := tools.PreviewChange(workDir, tool, jsontext.Value(args)); err == nil {
				d := acpsdk.ToolDiffContent(abs(ch.Path), ch.New)
				if ch.Exists {
					d = acpsdk.ToolDiffContent(abs(ch.Path), ch.New, ch.Old)
				}
				c.content = []acpsdk.ToolCallContent{d}
			}
		}
	}
	return c
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	const max = 200
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func (c call) start(id string, status acpsdk.ToolCallStatus) acpsdk.SessionUpdate {
	opts := []acpsdk.ToolCallStartOpt{acpsdk.WithStartKind(c.kind), acpsdk.WithStartStatus(status)}
	if len(c.locations) > 0 {
		opts = append(opts, acpsdk.WithStartLocations(c.locations))
	}
	if len(c.content) > 0 {
		opts = append(opts, acpsdk.WithStartContent(c.content))
	}
	if c.rawInput != nil {
		opts = append(opts, acpsdk.WithStartRawInput(c.rawInput))
	}
	return acpsdk.StartToolCall(acpsdk.ToolCallId(id), c.title, opts...)
}

func (c call) update(id string, status acpsdk.ToolCallStatus) acpsdk.SessionUpdate {
	tc := c.toolCall(id, status)
	return acpsdk.SessionUpdate{ToolCallUpdate: &acpsdk.SessionToolCallUpdate{
		ToolCallId: tc.ToolCallId, Title: tc.Title, Kind: tc.Kind, Status: tc.Status,
		Locations: tc.Locations, Content: tc.Content, RawInput: tc.RawInput,
		SessionUpdate: "tool_call_update",
	}}
}

func (c call) toolCall(id string, status acpsdk.ToolCallStatus) acpsdk.ToolCallUpdate {
	return acpsdk.ToolCallUpdate{
		ToolCallId: acpsdk.ToolCallId(id),
		Title:      acpsdk.Ptr(c.title),
		Kind:       acpsdk.Ptr(c.kind),
		Status:     acpsdk.Ptr(status),
		Locations:  c.locations,
		Content:    c.content,
		RawInput:   c.rawInput,
	}
}
