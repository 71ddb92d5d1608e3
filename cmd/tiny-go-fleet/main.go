// Command tiny-go-fleet runs tiny-go's agent jobs and eval suites on
// Temporal (docs/fleet.md). tiny-go starts it for `worker`,
// `eval --temporal` and `run --temporal`, so that the Temporal SDK (gRPC,
// protobuf) is not linked into tiny-go itself.
package main

import (
	"os"

	"github.com/tiny-agent/tiny-go/internal/fleet"
)

func main() {
	os.Exit(fleet.Main(os.Args[1:], os.Stdout, os.Stderr))
}
