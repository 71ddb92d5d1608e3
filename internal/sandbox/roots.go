package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// writableRoots lists the roots of p, symlinks resolved, without
// duplicates or roots nested in another; missing ones are left out.
//
// Workspace mode keeps the everyday toolchains working in the working
// directory: `go build` writes GOCACHE (under the user's cache directory
// unless set) and GOMODCACHE (under GOPATH), npm writes its cache (~/.npm
// unless npm_config_cache says otherwise), and git writes only inside the
// repository. The temporary directory serves every tool.
func writableRoots(p Policy) []string {
	getenv := p.Getenv
	home := getenv("HOME")
	var want []string
	add := func(path string) {
		if path != "" && filepath.IsAbs(path) {
			want = append(want, filepath.Clean(path))
		}
	}
	if p.Sealed && p.Mode == Workspace {
		add(p.Scratch)
		add(p.WorkDir)
		return resolvedRoots(want)
	}
	if p.Mode == ReadOnly && p.Scratch != "" {
		add(p.Scratch)
	} else {
		add(tempDir(getenv))
		if goos == "darwin" {
			add("/tmp") // TMPDIR is /var/folders/..., yet tools write /tmp
		}
	}
	if p.Mode == Workspace {
		add(p.WorkDir)
		cache := cacheDir(getenv, home)
		goCache := getenv("GOCACHE")
		if goCache == "" && cache != "" {
			goCache = filepath.Join(cache, "go-build")
		}
		if goos == "darwin" && home != "" {
			add(filepath.Join(home, "Library", "Caches")) // Go's build cache and others
		}
		// A new user's home has no ~/.cache yet, and a confined go could
		// not make its build cache there.
		if goCache != "off" && goCache != "" {
			ensureToolDir(getenv, "go", goCache)
			add(goCache)
		}
		add(cache)
		if modCache := goModCache(getenv, home); modCache != "" {
			ensureToolDir(getenv, "go", modCache)
			add(modCache)
		}
		if npmCache := firstSet(getenv, "npm_config_cache", "NPM_CONFIG_CACHE"); npmCache != "" {
			add(npmCache)
		} else if home != "" {
			ensureToolDir(getenv, "npm", filepath.Join(home, ".npm"))
			add(filepath.Join(home, ".npm"))
		}
		for _, w := range p.Writable {
			add(w)
		}
	}
	return resolvedRoots(want)
}

// resolvedRoots are the existing directories of want, symlinks resolved,
// without duplicates or roots nested in another.
func resolvedRoots(want []string) []string {
	var roots []string
	for _, r := range want {
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		roots = append(roots, real)
	}
	// Shorter first, so a root nested in an earlier one is dropped.
	slices.SortStableFunc(roots, func(a, b string) int { return len(a) - len(b) })
	var out []string
	for _, r := range roots {
		if !underAny(r, out) {
			out = append(out, r)
		}
	}
	return out
}

// goos is runtime.GOOS; tests set it to read another system's roots.
var goos = runtime.GOOS

// tempDir is os.TempDir for getenv.
func tempDir(getenv func(string) string) string {
	if d := getenv("TMPDIR"); d != "" {
		return d
	}
	return "/tmp"
}

// cacheDir is os.UserCacheDir for getenv.
func cacheDir(getenv func(string) string, home string) string {
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cache")
}

// goModCache is where the go command keeps downloaded modules.
func goModCache(getenv func(string) string, home string) string {
	if d := getenv("GOMODCACHE"); d != "" {
		return d
	}
	gopath := getenv("GOPATH")
	if gopath == "" {
		if home == "" {
			return ""
		}
		gopath = filepath.Join(home, "go")
	}
	first, _, _ := strings.Cut(gopath, string(os.PathListSeparator))
	return filepath.Join(first, "pkg", "mod")
}

// ensureToolDir creates a tool's cache directory when the tool is
// installed and the directory does not exist yet: inside the sandbox the
// tool could not create it in the home directory itself.
func ensureToolDir(getenv func(string) string, tool, dir string) {
	if _, err := os.Stat(dir); err == nil {
		return
	}
	for d := range strings.SplitSeq(getenv("PATH"), string(os.PathListSeparator)) {
		if d == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Join(d, tool)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			_ = os.MkdirAll(dir, 0o755)
			return
		}
	}
}

func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}
