package ui

// The read-only commands a Claude Code user reaches for: /agents, /todos,
// /mcp, /hooks and /permissions. Each shows the session's state as the
// host knows it; the UI only asks and prints.

// infoCommands are the names of those commands (commands.Builtins has
// their descriptions).
var infoCommands = map[string]bool{"agents": true, "todos": true, "mcp": true, "hooks": true, "permissions": true}

// InfoHost is a Host that answers the info commands: name is the command
// without its slash; the answer is one item a line.
type InfoHost interface {
	Info(name string) []string
}

// info asks the host for /name.
func info(h Host, name string) []string {
	i, ok := h.(InfoHost)
	if !ok {
		return []string{"/" + name + " is not available here."}
	}
	return i.Info(name)
}
