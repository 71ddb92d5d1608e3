// Command tiny-go is a durable coding agent. The program lives in
// internal/cli; this is only its process wiring.
package main

import (
	"os"

	"github.com/tiny-agent/tiny-go/internal/cli"
)

func main() {
	os.Exit(cli.Program())
}
