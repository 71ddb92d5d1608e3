package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tiny-agent/tiny-go/internal/hooks"
)

// hookMatcher is one matcher of initialize's "hooks": the SDK's callbacks
// that run for the events' calls the matcher matches.
type hookMatcher struct {
	Matcher     *string  `json:"matcher"`
	CallbackIDs []string `json:"hookCallbackIds"`
	// Timeout is in seconds.
	Timeout float64 `json:"timeout"`
}

// sdkHooks turns initialize's hooks into tiny-go hooks that ask the SDK
// (hook_callback) and read its answer as a command hook's output. They
// run beside the hooks of the settings files, as Claude Code's do.
func (d *Driver) sdkHooks(raw map[string][]hookMatcher) ([]hooks.Hook, error) {
	var out []hooks.Hook
	for ev, ms := range raw {
		for _, m := range ms {
			matcher := ""
			if m.Matcher != nil {
				matcher = *m.Matcher
			}
			timeout := time.Duration(m.Timeout * float64(time.Second))
			for _, id := range m.CallbackIDs {
				h, err := hooks.NewCallbackHook(hooks.Event(ev), matcher, timeout, "SDK hook callback "+id, "the SDK's initialize", d.hookCallback(id))
				if err != nil {
					return nil, err
				}
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// hookCallback asks the SDK to run callback id on a hook's input.
func (d *Driver) hookCallback(id string) hooks.Callback {
	return func(ctx context.Context, input []byte) ([]byte, error) {
		var in struct {
			ToolUseID *string `json:"tool_use_id"`
		}
		_ = json.Unmarshal(input, &in)
		r, err := d.request(ctx, map[string]any{"subtype": "hook_callback", "callback_id": id, "input": json.RawMessage(input), "tool_use_id": in.ToolUseID})
		if err != nil {
			return nil, err
		}
		if !r.OK {
			return nil, errors.New("the SDK's callback failed: " + r.Error)
		}
		if len(r.Body) == 0 {
			return []byte("{}"), nil
		}
		return r.Body, nil
	}
}

// addSDKHooks applies initialize's hooks, or says why they cannot be.
func (d *Driver) addSDKHooks(raw map[string][]hookMatcher) error {
	hs, err := d.sdkHooks(raw)
	if err != nil {
		return fmt.Errorf("initialize: hooks: %w", err)
	}
	if len(hs) == 0 {
		return nil
	}
	if err := d.s.AddHooks(hs...); err != nil {
		return fmt.Errorf("initialize: hooks: %w", err)
	}
	return nil
}
