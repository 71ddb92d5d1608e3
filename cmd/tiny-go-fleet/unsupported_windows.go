package main

// Windows is not supported: this import stops the build with one line that
// says so (see the package's doc).
import _ "github.com/tiny-agent/tiny-go/internal/platform/tiny-go-runs-on-linux-and-macos-use-wsl-on-windows"
