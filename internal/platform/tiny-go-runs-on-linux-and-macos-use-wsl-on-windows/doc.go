//go:build !windows

// Package platform is imported only by the commands' unsupported_windows.go
// and has no file for Windows: there, `go build` and `go install` stop
// before compiling anything with one error that names this directory,
// which says what to do. (tiny-go's sandbox, checkpoints and process
// control need Linux or macOS; WSL is Linux.)
package platform
