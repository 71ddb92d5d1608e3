package cli

import (
	"fmt"
	"os"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// Program runs tiny-go as the process it is (cmd/tiny-go): before
// anything else it takes the secrets out of its environment, so no command
// can read them from /proc/<pid>/environ of tiny-go nor inherit them, then
// becomes the subreaper of the commands it starts, then runs Main with the
// process's arguments and streams.
func Program() int {
	getenv, err := secrets.Conceal(secrets.Names(os.Getenv))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: warning: %v\n", cmdutil.ProgramName, err)
	}
	// After Conceal, which writes /proc/self/mem: the keys stay in memory.
	_ = secrets.ProtectMemory()
	// Orphans of commands become tiny-go's children, so they die with it.
	_ = procs.BecomeSubreaper()
	return Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, getenv)
}
