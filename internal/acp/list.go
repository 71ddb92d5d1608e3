package acp

import (
	"context"
	"path/filepath"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// ListSessions is session/list: the sessions of the directory the client
// names, newest first, a subagent's session right after its parent's,
// with its parent and agent in _meta (parentSessionId, agent).
func (srv *server) ListSessions(_ context.Context, p acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	if err := srv.ready(); err != nil {
		return acpsdk.ListSessionsResponse{}, err
	}
	if p.Cwd == nil || !filepath.IsAbs(*p.Cwd) {
		return acpsdk.ListSessionsResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "cwd must be an absolute path"})
	}
	listed, err := srv.opt.Backend.List(*p.Cwd)
	if err != nil {
		return acpsdk.ListSessionsResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	out := acpsdk.ListSessionsResponse{Sessions: make([]acpsdk.SessionInfo, 0, len(listed))}
	for _, l := range listed {
		info := acpsdk.SessionInfo{SessionId: acpsdk.SessionId(l.ID), Cwd: *p.Cwd, UpdatedAt: acpsdk.Ptr(l.UpdatedAt.UTC().Format(time.RFC3339))}
		if l.Title != "" {
			info.Title = acpsdk.Ptr(l.Title)
		}
		if l.Parent != "" {
			info.Meta = map[string]any{"parentSessionId": l.Parent, "agent": l.Agent}
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}
