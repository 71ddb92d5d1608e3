package checkpoint

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	"github.com/tiny-agent/tiny-go/internal/gitcmd"
)

// git clean -fdx removes ignored and untracked directories, .tiny-agent
// with its sessions and this store among them, so nothing would be left
// to rewind it from. git clean leaves a nested repository alone unless
// given -f twice, so .tiny-agent holds the bare minimum of one (HEAD,
// objects/, refs/: no commit), and .git/info/exclude, the repository's
// local ignore file, names .tiny-agent so git add -A does not meet the
// nested repository (and git status does not show it).

// protectStateDir makes .tiny-agent survive git clean; errors are ignored
// (the store works without it).
func (s *Store) protectStateDir() {
	if s.git == nil {
		return
	}
	state := filepath.Join(s.cwd, stateDirName)
	marker := filepath.Join(state, ".git")
	w, _ := s.gitDirs()
	if w.off != "" {
		return
	}
	// Checked once per process, marker or not: a nested repository that
	// no rule ignores would make the user's git add -A fail. No trailing
	// slash: ".tiny-agent/" would ask about its contents, which its own
	// .gitignore ignores.
	if err := s.userGitQuiet("check-ignore", "-q", "--no-index", stateDirName); err == nil {
		s.markNested(state, marker) // ignored: the user's rules keep git add away
		return
	}
	exclude := filepath.Join(w.commonDir, "info", "exclude")
	line := "/" + s.git.prefix + stateDirName + "/"
	data, err := os.ReadFile(exclude)
	if err != nil && !os.IsNotExist(err) {
		return
	}
	if !bytes.Contains(data, []byte(line+"\n")) {
		if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
			data = append(data, '\n')
		}
		data = append(data, "# tiny-go's state (sessions, checkpoints): never in version control\n"+line+"\n"...)
		if os.MkdirAll(filepath.Dir(exclude), 0o755) != nil || writeAtomic(exclude, data, 0o644, false) != nil {
			os.RemoveAll(marker) // unprotected rather than in git add's way
			return
		}
	}
	s.markNested(state, marker)
}

// markNested makes .tiny-agent a nested repository: HEAD, objects/, refs/.
func (s *Store) markNested(state, marker string) {
	if _, err := os.Lstat(filepath.Join(marker, "HEAD")); err == nil {
		return
	}
	for _, d := range []string{"objects", "refs"} {
		if _, err := ensureDirs(state, ".git", d); err != nil {
			return
		}
	}
	_ = writeAtomic(filepath.Join(marker, "HEAD"), []byte("ref: refs/heads/tiny-agent\n"), fileMode, false)
}

// userGitQuiet runs git on the user's repository for its exit status.
func (s *Store) userGitQuiet(args ...string) error {
	return gitcmd.Repo(context.Background(), s.cwd, nil, args...).Run()
}
