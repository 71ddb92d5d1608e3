package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/tiny-agent/tiny-go/internal/agent"
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

// builtinCommands are the slash commands an ACP session offers.
var builtinCommands = []command{
	{name: "compact", description: "Summarize the conversation so far to free the context window"},
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

// command runs a slash command.
func (s *sess) command(ctx context.Context, name, _ string) (agent.Result, error) {
	switch name {
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

func describeStats(st agent.CompactStats) string {
	return fmt.Sprintf("%d messages summarized, %d kept", st.Compacted, st.Kept)
}
