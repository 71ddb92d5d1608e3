package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TypeScript 7's compiler is written in Go and serves the language server
// protocol itself (`tsc --lsp --stdio`); it ships no tsserver.js, so
// typescript-language-server cannot drive it. A project whose own
// typescript is 7 or later gets its tsc; older ones keep
// typescript-language-server, which finds their tsserver.

// tsLSPArgs are tsc's arguments for the language server.
var tsLSPArgs = []string{"--lsp", "--stdio"}

// projectTypeScript is the tsc of the typescript package that node would
// resolve from dir (the nearest node_modules/typescript above it) when its
// major version is at least 7; "" otherwise.
func projectTypeScript(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		pkg := filepath.Join(d, "node_modules", "typescript")
		if _, err := os.Stat(filepath.Join(pkg, "package.json")); err == nil {
			if typeScriptMajor(pkg) < 7 {
				return ""
			}
			for _, bin := range []string{filepath.Join(d, "node_modules", ".bin", "tsc"), filepath.Join(pkg, "bin", "tsc")} {
				if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
					return bin
				}
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// pathTypeScript is tsc on PATH when it is TypeScript 7 or later (an
// `npm install -g typescript`): the package is the one its link points
// into.
func pathTypeScript(lookPath func(string) (string, error)) string {
	p, err := lookPath("tsc")
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || filepath.Base(filepath.Dir(real)) != "bin" {
		return ""
	}
	if typeScriptMajor(filepath.Dir(filepath.Dir(real))) < 7 {
		return ""
	}
	return p
}

// typeScriptMajor is the major version of the typescript package in dir;
// 0 when it cannot be told.
func typeScriptMajor(dir string) int {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return 0
	}
	var pkg struct{ Name, Version string }
	if json.Unmarshal(data, &pkg) != nil || pkg.Name != "typescript" {
		return 0
	}
	major, _, _ := strings.Cut(pkg.Version, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 0
	}
	return n
}
