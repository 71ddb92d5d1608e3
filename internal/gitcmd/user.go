package gitcmd

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// tiny-go's git ignores the system and global config, but two of their
// data keys matter and name no program: safe.directory (git refuses a
// repository another user owns unless it is named, and reads the key from
// system, global and command-line config only) and core.excludesFile (the
// user's global ignore rules). They are read once, from those scopes only
// (never a repository's), and passed on: safe.directory with -c, the
// excludes file in the private directory's config (Isolate).

type userConfig struct {
	safe     []string // -c safe.directory=... arguments
	excludes string   // core.excludesFile, "" when unset
}

var (
	userOnce sync.Once
	user     userConfig
)

func readUser() userConfig {
	userOnce.Do(func() { user = loadUser() })
	return user
}

// safeDirs is the -c safe.directory=... arguments for dir: none when the
// current user owns it.
func safeDirs(dir string) []string {
	var st syscall.Stat_t
	if dir == "" || syscall.Stat(dir, &st) != nil || int(st.Uid) == os.Geteuid() {
		return nil
	}
	return readUser().safe
}

// loadUser reads the two keys with tiny-go's own environment (its
// GIT_CONFIG_GLOBAL and -c of the user's shell included) outside any
// repository; the scope printed with each value says where it came from.
func loadUser() userConfig {
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "GIT_DIR" && name != "GIT_WORK_TREE" && name != "GIT_COMMON_DIR" {
			env = append(env, kv)
		}
	}
	cmd := exec.Command("git", "config", "--show-scope", "-z", "--type=path", "--get-regexp", `^(safe\.directory|core\.excludesfile)$`)
	cmd.Dir, cmd.Env = "/", append(env, "GIT_CEILING_DIRECTORIES=/")
	out, _ := cmd.Output() // exit 1: neither is set
	var u userConfig
	// -z prints: scope NUL key LF value NUL, for each.
	f := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		scope := f[i]
		if scope != "system" && scope != "global" && scope != "command" {
			continue
		}
		key, value, _ := strings.Cut(f[i+1], "\n")
		switch key {
		case "safe.directory":
			u.safe = append(u.safe, "-c", "safe.directory="+value)
		case "core.excludesfile":
			u.excludes = value // the last one wins, as in git
		}
	}
	return u
}
