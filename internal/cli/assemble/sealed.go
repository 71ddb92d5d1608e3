package assemble

import (
	"os"
	"path/filepath"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// sealed is where --approval review runs the commands it shows: a
// sandbox with the network off and nothing but the tree (the command's
// overlay) and a scratch directory writable; nil in other modes, or where
// commands are not confined (then review shows only the tree's changes,
// as it says at start).
func (a *Runner) sealed() (*tools.Sealed, error) {
	if a.approval != approval.Review || !a.Sandbox.Confined() {
		return nil, nil
	}
	scratch, err := a.scratchDir("tiny-go-review-")
	if err != nil {
		return nil, err
	}
	a.reviewScratchDir = scratch
	sb, _, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: a.Cwd, Scratch: scratch, Sealed: true,
		NetworkOff: true, Getenv: a.IO.Getenv, Hidden: a.hiddenPaths()})
	if err != nil {
		return nil, err
	}
	a.reviewSandbox = sb
	// Build caches of the sealed runs live in the scratch directory for
	// the session: a build does not start from nothing each time, and
	// the user's own caches never see a denied command's output.
	for _, d := range []string{"cache/go-build", "cache/npm"} {
		if err := os.MkdirAll(filepath.Join(scratch, d), 0o700); err != nil {
			return nil, err
		}
	}
	return &tools.Sealed{Sandbox: sb, Scratch: scratch, Unsealed: approval.Unsealed,
		Env: []string{"XDG_CACHE_HOME=" + filepath.Join(scratch, "cache"), "GOCACHE=" + filepath.Join(scratch, "cache/go-build"),
			"npm_config_cache=" + filepath.Join(scratch, "cache/npm")}}, nil
}
