package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// promptText turns the prompt's content blocks into the user message:
// text as is, embedded resources (the editor's @-mentions with their
// content, unsaved buffers included) as fenced blocks named by their URI,
// and resource links as references the model can read.
func promptText(blocks []acpsdk.ContentBlock) (string, error) {
	var b strings.Builder
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			fmt.Fprintf(&b, "\n<context uri=%q>\n%s\n</context>\n", r.Uri, r.Text)
		case c.Resource != nil:
			return "", errors.New("binary embedded resources are not supported; attach text")
		case c.ResourceLink != nil:
			fmt.Fprintf(&b, " %s ", strings.TrimPrefix(c.ResourceLink.Uri, "file://"))
		case c.Image != nil:
			return "", errors.New("tiny-go does not take images yet (promptCapabilities.image is false)")
		case c.Audio != nil:
			return "", errors.New("tiny-go does not take audio (promptCapabilities.audio is false)")
		}
	}
	text := b.String()
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the prompt is empty")
	}
	return text, nil
}

// command is a slash command of the editor's command menu.
type command struct {
	name, description, hint string
}

// builtinCommands are the slash commands an ACP session offers: compact,
// rewind, and the terminal's read-only ones (infoCommands).
var builtinCommands = append([]command{
	{name: "compact", description: "Summarize the conversation so far to free the context window"},
	{name: "rewind", description: "Put files and the conversation back to before a turn (no argument: list the turns)", hint: "N [files|conversation] [force]"},
}, infoMenu()...)

// infoCommands show the session's state, as in the terminal.
var infoCommands = []string{"agents", "todos", "mcp", "hooks", "permissions"}

// infoMenu is infoCommands with the terminal's descriptions.
func infoMenu() []command {
	var out []command
	for _, b := range commands.Builtins {
		if slices.Contains(infoCommands, b.Name) {
			out = append(out, command{name: b.Name, description: strings.ToUpper(b.Description[:1]) + b.Description[1:]})
		}
	}
	return out
}

// Informer is a Session that answers the info commands: name without its
// slash; one item a line.
type Informer interface {
	Info(name string) []string
}

// slashCommand recognizes "/name ..." of a built-in command.
func slashCommand(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", false
	}
	name, _, _ := strings.Cut(t[1:], " ")
	for _, c := range builtinCommands {
		if c.name == name {
			return name, true
		}
	}
	return "", false
}

// customCommand recognizes "/name args" of a custom command.
func customCommand(custom []commands.Command, text string) (commands.Command, string, bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return commands.Command{}, "", false
	}
	name, args, _ := strings.Cut(t[1:], " ")
	c, ok := commands.Find(custom, name)
	return c, args, ok
}

// command runs a slash command.
func (s *sess) command(ctx context.Context, name, text string) (agent.Result, error) {
	switch name {
	case "rewind":
		_, args, _ := strings.Cut(strings.TrimSpace(text), " ")
		return agent.Result{}, s.rewind(ctx, args)
	case "agents", "todos", "mcp", "hooks", "permissions":
		in, ok := s.s.(Informer)
		if !ok {
			s.update(acpsdk.UpdateAgentMessageText("/" + name + " is not available here."))
			return agent.Result{}, nil
		}
		s.update(acpsdk.UpdateAgentMessageText(strings.Join(in.Info(name), "\n")))
		return agent.Result{}, nil
	case "compact":
		res, stats, err := s.s.Agent().Compact(ctx)
		if errors.Is(err, agent.ErrNothingToCompact) {
			s.update(acpsdk.UpdateAgentMessageText(err.Error()))
			return agent.Result{}, nil
		}
		if rerr := runError(s.id, res, err); rerr != nil {
			return res, rerr
		}
		if res.Outcome == session.OutcomeCompleted {
			s.update(acpsdk.UpdateAgentMessageText(fmt.Sprintf("Compacted: %s.", describeStats(stats))))
		}
		return res, nil
	}
	return agent.Result{}, fmt.Errorf("unknown command /%s", name)
}

// rewind is /rewind: without a turn it lists the turns; with one it shows
// what the rewind would do as a tool call, asks (session/request_permission)
// and applies it. A conversation rewind continues in a fork, as in the
// terminal; the editor keeps addressing it by this session's id.
func (s *sess) rewind(ctx context.Context, args string) error {
	rw, ok := s.s.(Rewinder)
	if !ok {
		s.update(acpsdk.UpdateAgentMessageText("This session cannot be rewound."))
		return nil
	}
	req, list, err := commands.ParseRewind(args)
	if err != nil {
		s.update(acpsdk.UpdateAgentMessageText(err.Error()))
		return nil
	}
	if list {
		turns, err := rw.RewindTurns()
		if err != nil {
			return err
		}
		if len(turns) == 0 {
			s.update(acpsdk.UpdateAgentMessageText("There is no earlier turn to rewind to."))
			return nil
		}
		s.update(acpsdk.UpdateAgentMessageText(strings.Join(append(turns, "", "Rewind with /rewind N [files|conversation] [force]."), "\n")))
		return nil
	}
	preview, apply, err := rw.PlanRewind(ctx, req)
	if err != nil {
		s.update(acpsdk.UpdateAgentMessageText("Cannot rewind: " + err.Error()))
		return nil
	}
	id := fmt.Sprintf("rewind-%d-%d", req.Turn, time.Now().UnixNano())
	c := call{title: fmt.Sprintf("Rewind to before turn %d", req.Turn), kind: acpsdk.ToolKindEdit,
		content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(strings.Join(preview, "\n")))}}
	s.update(c.start(id, acpsdk.ToolCallStatusPending))
	s.flush()
	resp, err := s.srv.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(s.id),
		ToolCall:  c.toolCall(id, acpsdk.ToolCallStatusPending),
		Options: []acpsdk.PermissionOption{
			{OptionId: optAllowOnce, Name: "Rewind", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optRejectOnce, Name: "Cancel", Kind: acpsdk.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil || resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionId != optAllowOnce {
		s.update(acpsdk.UpdateToolCall(acpsdk.ToolCallId(id), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusFailed),
			acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("Rewind cancelled; nothing changed."))})))
		return nil
	}
	s.update(acpsdk.UpdateToolCall(acpsdk.ToolCallId(id), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress)))
	lines, err := apply(context.WithoutCancel(ctx))
	if err != nil {
		s.update(acpsdk.UpdateToolCall(acpsdk.ToolCallId(id), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusFailed),
			acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("Rewind failed: " + err.Error()))})))
		return nil
	}
	s.update(acpsdk.UpdateToolCall(acpsdk.ToolCallId(id), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusCompleted),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(strings.Join(lines, "\n")))})))
	return nil
}

func describeStats(st agent.CompactStats) string {
	return fmt.Sprintf("%d messages summarized, %d kept", st.Compacted, st.Kept)
}
