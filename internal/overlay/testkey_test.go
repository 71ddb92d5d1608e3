package overlay

// The tests' state key lies in a folder of their own (testenv's init),
// never in the user's ~/.local/state/tiny-go.
import _ "github.com/tiny-agent/tiny-go/internal/testenv"
