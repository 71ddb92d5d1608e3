// Package headlesscmd is `tiny-go -p` with stream-json: Claude Code's
// print mode and the Agent SDKs' driver, each session an assembled Runner.
package headlesscmd

import "github.com/tiny-agent/tiny-go/internal/cli/assemble"

// runner is the assembled runner seen by the headless driver.
type runner struct{ *assemble.Runner }
