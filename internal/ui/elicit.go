package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// AskForm puts an MCP server's form to the user on out and reads the
// answers from in, a line each, for when no UI runs (`tiny-go mcp call`,
// one-shot mode on a terminal). An empty line takes the field's default;
// the last question accepts, declines (n) or cancels (esc).
func AskForm(ctx context.Context, in io.Reader, out io.Writer, f mcp.Form) (mcp.ElicitAnswer, error) {
	fmt.Fprintf(out, "MCP %s asks: %s\n", f.Server, OneLine(f.Message))
	content := map[string]any{}
	for _, fl := range f.Fields {
		v, skip, err := askField(ctx, in, out, fl)
		if errors.Is(err, ErrAborted) {
			return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
		}
		if err != nil {
			return mcp.ElicitAnswer{}, err
		}
		if !skip {
			content[fl.Name] = v
		}
	}
	for {
		fmt.Fprint(out, "Send these answers? [Y]es, n to decline, esc to cancel: ")
		line, err := readLine(ctx, in)
		if err != nil {
			fmt.Fprintln(out)
			return mcp.ElicitAnswer{}, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "y", "yes":
			return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: content}, nil
		case "n", "no":
			return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
		case "esc", "\x1b":
			return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
		}
	}
}

// askField reads one field until it parses; skip is an optional field
// left empty.
func askField(ctx context.Context, in io.Reader, out io.Writer, fl mcp.Field) (v any, skip bool, err error) {
	for {
		fmt.Fprint(out, "  "+fieldPrompt(fl)+": ")
		line, err := readLine(ctx, in)
		if err != nil {
			fmt.Fprintln(out)
			return nil, false, err
		}
		text := strings.TrimSpace(line)
		switch {
		case text == "esc" || strings.HasPrefix(text, "\x1b"):
			return nil, false, ErrAborted
		case text == "" && fl.Default != nil:
			return fl.Default, false, nil
		case text == "" && !fl.Required:
			return nil, true, nil
		case text == "":
			fmt.Fprintln(out, "  (required)")
			continue
		}
		v, err := fl.Parse(text)
		if err != nil {
			fmt.Fprintln(out, "  "+err.Error())
			continue
		}
		return v, false, nil
	}
}

// fieldPrompt is "Label (type, required) [default]"; a multi-select
// takes its values separated by commas.
func fieldPrompt(fl mcp.Field) string {
	kind := fl.Type
	if h := fl.Hint(); h != "" {
		kind = h
	}
	if len(fl.Enum) > 0 {
		kind = strings.Join(fl.Enum, "|")
		if fl.Multi {
			kind = "any of " + kind + ", separated by commas"
		}
	}
	if fl.Required {
		kind += ", required"
	}
	s := OneLine(fl.Label()) + " (" + OneLine(kind) + ")"
	if fl.Description != "" {
		s += " " + OneLine(fl.Description)
	}
	if fl.Default != nil {
		s += " [" + OneLine(fl.Text(fl.Default)) + "]"
	}
	return s
}

// FormPrompt shows a form in the interactive UI as a question: yes sends
// the defaults, no declines. Editing the fields is for the line prompt.
func FormPrompt(f mcp.Form) approval.Prompt {
	p := approval.Prompt{Tool: "mcp:" + f.Server, Action: "Answer the server's question: " + f.Message}
	for _, fl := range f.Fields {
		p.Detail = append(p.Detail, fieldPrompt(fl))
	}
	p.Detail = append(p.Detail, "y sends the values in brackets; n declines")
	return p
}

// OneLine keeps a server's text on its line.
func OneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
