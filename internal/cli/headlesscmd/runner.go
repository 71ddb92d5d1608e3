package headlesscmd

import "github.com/tiny-agent/tiny-go/internal/cli/assemble"

// runner is the assembled runner seen by the headless driver.
type runner struct{ *assemble.Runner }
