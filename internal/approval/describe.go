package approval

import (
	"net/url"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// classify turns a request into what the user is asked, or marks it
// harmless.
func classify(req agent.ApprovalRequest, workDir string) call {
	if !req.Builtin {
		return call{prompt: Prompt{Tool: req.Display, Action: "Call the MCP tool " + req.Display,
			Detail: limitLines(argumentLines(req.Arguments)), Always: "every call of " + req.Display}, rules: toolRule(req.Tool)}
	}
	switch req.Tool {
	case "read", "diagnostics": // diagnostics only asks the language servers
		return call{harmless: true}
	case "bash":
		cmd, _ := stringField(req.Arguments, "command")
		return commandCall(req.Display, "Run a command", cmd)
	case "bg":
		action, _ := stringField(req.Arguments, "action")
		switch action {
		case "start":
			cmd, _ := stringField(req.Arguments, "command")
			return commandCall(req.Display, "Start a background command", cmd)
		case "stop":
			id, _ := stringField(req.Arguments, "id")
			return call{prompt: Prompt{Tool: req.Display, Action: "Stop the background process " + id,
				Always: "stopping background processes"}, rules: []string{req.Tool + "\x00stop"}}
		}
		// list, status, logs and invalid calls change nothing.
		return call{harmless: true}
	case "write", "edit":
		return fileCall(req, workDir)
	case "web_fetch":
		return fetchCall(req)
	case "web_search":
		// The query leaves the machine for the search backend.
		q, _ := stringField(req.Arguments, "query")
		return call{prompt: Prompt{Tool: req.Display, Action: "Search the web", Detail: limitLines([]string{q}),
			Always: "every web search"}, rules: toolRule(req.Tool)}
	}
	return call{prompt: Prompt{Tool: req.Display, Action: "Run " + req.Display,
		Detail: limitLines(argumentLines(req.Arguments)), Always: "every call of " + req.Display}, rules: toolRule(req.Tool)}
}

// fetchCall asks about a web_fetch by its URL; "always" allows its host,
// kept as WebFetch(domain:HOST) like Claude Code's answer.
func fetchCall(req agent.ApprovalRequest) call {
	raw, _ := stringField(req.Arguments, "url")
	c := call{prompt: Prompt{Tool: req.Display, Action: "Fetch " + raw}}
	if p, ok := stringField(req.Arguments, "prompt"); ok && strings.TrimSpace(p) != "" {
		c.prompt.Detail = limitLines(strings.Split("prompt: "+p, "\n"))
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return c
	}
	if host := strings.TrimSuffix(strings.ToLower(u.Hostname()), "."); host != "" {
		c.prompt.Always = "fetches from " + host
		c.rules = []string{req.Tool + "\x00domain\x00" + host}
	}
	return c
}

// fileCall shows the diff a write or edit would make; a call that would
// fail shows why (approving it changes nothing).
func fileCall(req agent.ApprovalRequest, workDir string) call {
	c := call{prompt: Prompt{Tool: req.Display, Always: "every " + req.Display + " call"}, rules: toolRule(req.Tool)}
	change, err := tools.PreviewChange(workDir, req.Tool, req.Arguments)
	path := change.Path
	if path == "" {
		path = "a file"
	}
	switch {
	case req.Tool == "write" && !change.Exists:
		c.prompt.Action = "Create " + path
	case req.Tool == "write":
		c.prompt.Action = "Overwrite " + path
	default:
		c.prompt.Action = "Edit " + path
	}
	if err != nil {
		c.prompt.Detail = []string{"This call will fail: " + err.Error()}
		return c
	}
	c.prompt.Detail = limitLines(diffLines(change))
	return c
}

// diffLines is the unified diff of a change, without the trailing newline
// notes a terminal does not need.
func diffLines(c tools.FileChange) []string {
	from := "a/" + strings.TrimPrefix(c.Path, "/")
	if !c.Exists {
		from = "/dev/null"
	}
	d := udiff.Unified(from, "b/"+strings.TrimPrefix(c.Path, "/"), c.Old, c.New)
	if d == "" {
		return []string{"(no change)"}
	}
	return strings.Split(strings.TrimSuffix(d, "\n"), "\n")
}

// argumentLines is the arguments object, indented, one line per line.
func argumentLines(args jsontext.Value) []string {
	v := jsontext.Value(append([]byte(nil), args...))
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		return []string{string(args)}
	}
	return strings.Split(string(v), "\n")
}

func stringField(args jsontext.Value, name string) (string, bool) {
	var m map[string]jsontext.Value
	if json.Unmarshal(args, &m) != nil {
		return "", false
	}
	var s string
	if json.Unmarshal(m[name], &s) != nil {
		return "", false
	}
	return s, true
}
