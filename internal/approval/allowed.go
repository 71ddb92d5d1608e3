package approval

import (
	"context"
	"slices"
	"strings"
)

type askerKey struct{}

// WithAsker is ctx for an approval asked on behalf of who ("explore
// subagent"): the question names it (issue 47: a subagent's question
// looked like the parent's).
func WithAsker(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, askerKey{}, who)
}

func askerOf(ctx context.Context) string {
	who, _ := ctx.Value(askerKey{}).(string)
	return who
}

// Allowed describes, one a line in a user's words, what this session's
// "always" answers allow without asking (for /permissions).
func (g *Gate) Allowed() []string {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	keys := make([]string, 0, len(g.rules))
	for r, ok := range g.rules {
		if ok {
			keys = append(keys, r)
		}
	}
	g.mu.Unlock()
	slices.Sort(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, describeRule(k))
	}
	return out
}

// describeRule puts a rule key (see call.rules) in words.
func describeRule(key string) string {
	parts := strings.Split(key, "\x00")
	switch {
	case len(parts) == 2 && parts[1] == "tool":
		return "every " + parts[0] + " call"
	case len(parts) == 3 && parts[1] == "cmd":
		return parts[0] + ": `" + parts[2] + "` commands"
	case len(parts) == 2:
		return parts[0] + ": " + parts[1]
	}
	return strings.Join(parts, " ")
}
