// Package gitcmd is the one way tiny-go runs git in a user's tree. A
// command the model ran can write the repository's config (.git/config,
// files it includes) and its attributes (.gitattributes,
// .git/info/attributes); git would then run whatever program they name
// (filters, textconv, diff and merge drivers, fsmonitor, hooks, ssh,
// credential helpers, pagers, editors, gpg, a lazy fetch's upload-pack)
// in tiny-go's own process tree, outside every sandbox. So:
//
//   - the environment ignores the system and global config and attributes,
//     turns off every transport (a partial clone's lazy fetch runs
//     upload-pack or ssh) and names no pager, editor, askpass or ssh;
//   - every command gets -c overrides for each config key that names a
//     program (command-line config wins over the repository's);
//   - git that reads the working tree's file contents (add, diff) runs on
//     a private git directory (Isolate): the repository's config is never
//     read, and its info/attributes, which outranks every .gitattributes,
//     unsets filter, diff, merge and the conversions for every path;
//   - git on the user's own repository (refs, HEAD) is limited to
//     subcommands that never read a file's contents (Repo).
package gitcmd

import (
	"context"
	"os"
	"os/exec"
	"strings"
)

// overrides neutralise every config key that names a program (or makes
// git start one: auto gc, fsmonitor), plus the conversions that change
// what a snapshot holds. Per-driver keys (filter.<name>.clean,
// diff.<name>.textconv, merge.<name>.driver, remote.<name>.uploadpack)
// cannot be listed in advance: drivers are unset by Isolate's attributes,
// remotes unreachable by GIT_ALLOW_PROTOCOL.
var overrides = []string{
	"core.fsmonitor=false", "core.hooksPath=/dev/null",
	"core.pager=cat", "core.editor=:", "sequence.editor=:", "core.askPass=",
	"core.sshCommand=", "core.gitProxy=", "core.alternateRefsCommand=",
	"core.attributesFile=/dev/null",
	"credential.helper=", "diff.external=", "diff.tool=", "merge.tool=",
	"gpg.program=", "gpg.openpgp.program=", "gpg.x509.program=", "gpg.ssh.program=",
	"gpg.ssh.defaultKeyCommand=", "commit.gpgSign=false", "tag.gpgSign=false",
	"push.gpgSign=false", "log.showSignature=false",
	"protocol.allow=never", "uploadpack.packObjectsHook=",
	"gc.auto=0", "gc.autoDetach=false", "maintenance.auto=false",
	"core.autocrlf=false", "core.safecrlf=false",
	"core.splitIndex=false", "core.untrackedCache=true",
	"submodule.recurse=false", "fetch.recurseSubmodules=false",
}

// Args is args after the -c overrides.
func Args(args ...string) []string {
	out := make([]string, 0, 2*len(overrides)+len(args))
	for _, o := range overrides {
		out = append(out, "-c", o)
	}
	return append(out, args...)
}

// dropped are variables of tiny-go's environment that would point git
// at another repository, add config, or name a program.
var dropped = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_OBJECT_DIRECTORY": true,
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_COMMON_DIR": true, "GIT_NAMESPACE": true,
	"GIT_PREFIX": true, "GIT_CONFIG": true, "GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true,
	"GIT_ATTR_SOURCE": true, "GIT_EXTERNAL_DIFF": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true,
	"GIT_SSH_VARIANT": true, "GIT_PROXY_COMMAND": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true,
	"GIT_PAGER": true, "PAGER": true, "GIT_EDITOR": true, "VISUAL": true, "EDITOR": true,
	"GIT_SEQUENCE_EDITOR": true, "GIT_ALLOW_PROTOCOL": true, "GIT_CONFIG_GLOBAL": true,
	"GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_NOSYSTEM": true, "GIT_ATTR_NOSYSTEM": true,
	"GIT_TERMINAL_PROMPT": true, "GIT_NO_LAZY_FETCH": true, "GIT_OPTIONAL_LOCKS": true,
}

// fixed is what every git of tiny-go runs with.
var fixed = []string{
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
	"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_PAGER=cat", "PAGER=cat",
	"GIT_EDITOR=:", "GIT_SEQUENCE_EDITOR=:",
	// An empty list allows no transport, whatever protocol.<name>.allow
	// the repository sets; a partial clone does not fetch lazily either.
	"GIT_ALLOW_PROTOCOL=", "GIT_NO_LAZY_FETCH=1",
	"GIT_OPTIONAL_LOCKS=0",
}

// Env is environ without the variables above, with the fixed ones, then
// extra (GIT_DIR and the like for an isolated run).
func Env(environ []string, extra ...string) []string {
	env := make([]string, 0, len(environ)+len(fixed)+len(extra))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if dropped[name] || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, fixed...)
	return append(env, extra...)
}

// Command is git args in dir with env (built by Env) and the overrides.
// It is for a private git directory (Isolate) or, through Repo, for the
// user's repository.
func Command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", Args(append(safeDirs(dir), args...)...)...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// repoSafe are the subcommands that may run on the user's own repository
// directory: none of them reads a working-tree file's contents, so no
// attribute can make them start a filter or a diff driver.
var repoSafe = map[string]bool{
	"rev-parse": true, "for-each-ref": true, "update-ref": true, "symbolic-ref": true,
	"write-tree": true, "check-ignore": true,
	"rev-list": true, // commits only: a rewind preview counts those it undoes
}

// Repo is git args on the user's repository (found from dir), with
// extra environment. It panics on a subcommand outside repoSafe: one
// that reads file contents must run on a private directory (Isolate).
func Repo(ctx context.Context, dir string, extra []string, args ...string) *exec.Cmd {
	if len(args) == 0 || !repoSafe[args[0]] {
		panic("gitcmd: git " + strings.Join(args[:min(len(args), 1)], "") + " may read file contents: run it on an isolated git directory")
	}
	return Command(ctx, dir, Env(os.Environ(), extra...), args...)
}
