package cli

import (
	"fmt"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// newestUsable refuses --continue when the newest session is corrupt:
// quietly taking an older one would continue a conversation the user did
// not mean, and hide that the newest one is damaged.
func newestUsable(s store.Summary) error {
	if s.State != store.SummaryCorrupt {
		return nil
	}
	why := "it is corrupt"
	if c := s.Corruption; c != nil {
		why = fmt.Sprintf("it is corrupt (%s at line %d", c.Code, c.Line)
		if c.Detail != "" {
			why += ": " + c.Detail
		}
		why += ")"
	}
	return fmt.Errorf("--continue: the newest session %s (%s) cannot be continued: %s. Inspect it with: tiny-go session verify %s; or resume another with --session <id> (tiny-go session list)", s.ID, s.Path, why, s.ID)
}
