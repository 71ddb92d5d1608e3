package cli

import (
	"errors"

	"github.com/tiny-agent/tiny-go/internal/hooks"
)

// AddHooks adds the SDK's hook callbacks to the session's hooks runner,
// which a headless run always has (embedding.callbackHooks).
func (s *headlessSession) AddHooks(hs ...hooks.Hook) error {
	u := s.r.userHooks
	if u == nil || u.run == nil {
		return errors.New("this session has no hooks runner")
	}
	u.run.Add(hs...)
	return nil
}
