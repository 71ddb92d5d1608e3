package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/tiny-agent/tiny-go/internal/gitcmd"
	"golang.org/x/sys/unix"
)

// Git state: what a command can change in a repository besides its files.
// Before and after every command the store records HEAD, every ref (the
// branches, tags, remotes), the stash list (refs/stash and its reflog,
// which is the list) and the index, so a rewind puts them back like files.
// A command that changes none of them costs a stat of a few files under
// .git (the state is read again only when one of them changed). Objects
// that a command made unreachable (a deleted branch, a dropped stash, the
// commits a reset left behind) are kept reachable under refs/tiny-agent/keep/
// so that git gc cannot prune them before a rewind needs them.

// repoState is one recorded state, stored as a blob; a Record names it.
type repoState struct {
	// Head is "ref: refs/heads/<name>" or a detached commit id.
	Head string `json:"head"`
	// Refs maps every ref but refs/stash and refs/tiny-agent/ to its id.
	Refs map[string]string `json:"refs,omitempty"`
	// Stash is refs/stash's id and StashLog the blob of its reflog (the
	// stash list), "" when there is no stash.
	Stash    string `json:"stash,omitempty"`
	StashLog string `json:"stashLog,omitempty"`
	// Index is the blob of the index file, byte for byte.
	Index string `json:"index,omitempty"`
}

// keepRefPrefix is the private ref namespace that keeps objects alive.
const keepRefPrefix = "refs/tiny-agent/keep/"

// gitWatch caches the newest recorded git state of this process.
type gitWatch struct {
	gitDir    string // the work tree's git directory (HEAD, index)
	commonDir string // refs, packed-refs, logs (shared by linked work trees)
	off       string // why git state is not recorded ("" when it is)
	key       string // stat fingerprint of the newest capture
	racy      bool   // a file of it changed too recently to trust its stat
	hash      string // blob of the newest capture
	state     *repoState
}

// gitDirs finds the git and common directories once.
func (s *Store) gitDirs() (*gitWatch, error) {
	w := &s.gitw
	if w.gitDir != "" || w.off != "" {
		return w, nil
	}
	out, err := gitcmd.Repo(context.Background(), s.cwd, nil, "rev-parse", "--absolute-git-dir", "--git-common-dir", "--show-ref-format").Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	switch {
	case err != nil || len(lines) < 2:
		w.off = "git rev-parse failed"
	case len(lines) >= 3 && lines[2] != "files" && lines[2] != "--show-ref-format": // an older git echoes the option: files only
		w.off = "the repository stores refs as " + lines[2]
	default:
		w.gitDir, w.commonDir = lines[0], lines[1]
		if !filepath.IsAbs(w.commonDir) {
			w.commonDir = filepath.Join(s.cwd, w.commonDir)
		}
	}
	return w, nil
}

// gitKey is a fingerprint of the files that hold the git state: git
// replaces each of them by a rename, so an unchanged stat (inode, size,
// mtime) means unchanged content. Loose refs are not stat'ed one by one:
// writing, replacing or deleting one changes its directory's mtime. It
// returns the newest mtime seen: a change within the file system's clock
// tick of a capture may leave the stat as it was (as git's racy index),
// so such a capture is read again next time.
func (w *gitWatch) gitKey() (string, int64) {
	var b strings.Builder
	var newest int64
	stat := func(p string) {
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			fmt.Fprintf(&b, "%s %d %d %d.%d %d.%d\n", p, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
			newest = max(newest, st.Mtim.Nano(), st.Ctim.Nano())
		}
	}
	stat(filepath.Join(w.gitDir, "HEAD"))
	stat(filepath.Join(w.gitDir, "index"))
	stat(filepath.Join(w.commonDir, "packed-refs"))
	stat(filepath.Join(w.commonDir, "logs", "refs", "stash"))
	refs := filepath.Join(w.commonDir, "refs")
	_ = filepath.WalkDir(refs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p == filepath.Join(refs, "tiny-agent") {
			return fs.SkipDir
		}
		stat(p)
		return nil
	})
	return b.String(), newest
}

// captureGitLocked records the git state now and returns its blob ("" in
// a plain store or when it cannot be read) and the bytes it added. The
// caller holds the store lock.
func (s *Store) captureGitLocked(ctx context.Context) (string, *repoState, int64) {
	if s.git == nil {
		return "", nil, 0
	}
	w, _ := s.gitDirs()
	if w.off != "" {
		return "", nil, 0
	}
	began := time.Now().UnixNano()
	key, newest := w.gitKey()
	if key == w.key && w.hash != "" && !w.racy {
		return w.hash, w.state, 0
	}
	st, added, err := s.readGitState(ctx, w)
	if err != nil {
		return "", nil, added
	}
	data, err := json.Marshal(st, json.Deterministic(true))
	if err != nil {
		return "", nil, added
	}
	h, n, err := s.putBlob(data)
	if err != nil {
		return "", nil, added
	}
	w.key, w.hash, w.state = key, h, st
	w.racy = newest >= began-racyWindow
	return h, st, added + n
}

// readGitState reads HEAD, the refs, the stash list and the index.
func (s *Store) readGitState(ctx context.Context, w *gitWatch) (*repoState, int64, error) {
	st := &repoState{Refs: map[string]string{}}
	head, err := os.ReadFile(filepath.Join(w.gitDir, "HEAD"))
	if err != nil {
		return nil, 0, err
	}
	st.Head = strings.TrimSpace(string(head))
	out, err := s.userGit(ctx, nil, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, 0, err
	}
	for _, line := range strings.Split(string(out), "\n") {
		oid, name, ok := strings.Cut(line, " ")
		switch {
		case !ok || strings.HasPrefix(name, "refs/tiny-agent/"):
		case name == "refs/stash":
			st.Stash = oid
		default:
			st.Refs[name] = oid
		}
	}
	var added int64
	keep := func(p string) string {
		data, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		h, n, err := s.putBlob(data)
		if err != nil {
			return ""
		}
		added += n
		return h
	}
	if st.Stash != "" {
		st.StashLog = keep(filepath.Join(w.commonDir, "logs", "refs", "stash"))
	}
	st.Index = keep(filepath.Join(w.gitDir, "index"))
	return st, added, nil
}

// userGit runs git on the user's repository (its own index and objects).
func (s *Store) userGit(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := gitcmd.Repo(ctx, s.cwd, nil, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// reachable lists the objects a state keeps alive: its refs, a detached
// HEAD, every entry of the stash list.
func (s *Store) reachable(st *repoState) map[string]bool {
	out := map[string]bool{}
	if st == nil {
		return out
	}
	for _, oid := range st.Refs {
		out[oid] = true
	}
	if !strings.HasPrefix(st.Head, "ref:") && st.Head != "" {
		out[st.Head] = true
	}
	if st.Stash != "" {
		out[st.Stash] = true
	}
	if st.StashLog != "" {
		if data, err := s.readBlob(st.StashLog); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if f := strings.Fields(line); len(f) >= 2 {
					out[f[1]] = true
				}
			}
		}
	}
	return out
}

// keepDropped makes the objects that before kept alive and after does not
// reachable from refs/tiny-agent/keep/, and the content the index of
// before staged (as a tree), so a rewind finds them after a gc.
func (s *Store) keepDropped(ctx context.Context, before, after *repoState) {
	if before == nil || after == nil {
		return
	}
	now := s.reachable(after)
	var script strings.Builder
	for oid := range s.reachable(before) {
		if !now[oid] && oid != "" {
			fmt.Fprintf(&script, "update %s%s %s\n", keepRefPrefix, oid, oid)
		}
	}
	if before.Index != "" && before.Index != after.Index {
		if tree := s.indexTree(ctx, before.Index); tree != "" {
			fmt.Fprintf(&script, "update %s%s %s\n", keepRefPrefix, tree, tree)
		}
	}
	if script.Len() > 0 {
		_, _ = s.userGit(ctx, []byte(script.String()), "update-ref", "--stdin")
	}
}

// indexTree writes the tree of a recorded index (its staged blobs
// included) into the repository; "" when it cannot (a conflicted index).
func (s *Store) indexTree(ctx context.Context, index string) string {
	data, err := s.readBlob(index)
	if err != nil {
		return ""
	}
	tmp, err := os.CreateTemp(s.root, "index-*")
	if err != nil {
		return ""
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	tmp.Close()
	if err != nil {
		return ""
	}
	out, err := gitcmd.Repo(ctx, s.cwd, []string{"GIT_INDEX_FILE=" + tmp.Name()}, "write-tree").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// readGitStateBlob loads a recorded state.
func (s *Store) readGitStateBlob(h string) (*repoState, error) {
	data, err := s.readBlob(h)
	if err != nil {
		return nil, err
	}
	var st repoState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("git state %s: %w", h[:min(len(h), 19)], err)
	}
	if st.Refs == nil {
		st.Refs = map[string]string{}
	}
	return &st, nil
}

// markGitState marks the blobs a live record's git state needs.
func (s *Store) markGitState(h string, live map[string]bool) {
	live[h] = true
	if st, err := s.readGitStateBlob(h); err == nil {
		live[st.Index], live[st.StashLog] = true, true
	}
}

// Git actions of a rewind.
const (
	GitRef   = "ref"   // a branch, tag or other ref: Name, its id (or "" absent)
	GitHead  = "head"  // HEAD: "ref: refs/heads/x" or a commit id
	GitStash = "stash" // the stash list: "<id> <reflog blob>" or ""
	GitIndex = "index" // the index file: its blob
)

// GitAction puts one piece of git state back.
type GitAction struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	From string `json:"from"` // the value when the rewind was planned
	To   string `json:"to"`
}

// label is how a git action is named to the user.
func (a GitAction) label() string {
	switch a.Kind {
	case GitRef:
		return "git " + a.Name
	case GitHead:
		return "git HEAD"
	case GitStash:
		return "git stash list"
	}
	return "git index"
}

// gitValues flattens a state into comparable values, one per action key.
func gitValues(st *repoState) map[string]GitAction {
	out := map[string]GitAction{}
	if st == nil {
		return out
	}
	for n, oid := range st.Refs {
		out[GitRef+" "+n] = GitAction{Kind: GitRef, Name: n, To: oid}
	}
	out[GitHead] = GitAction{Kind: GitHead, To: st.Head}
	stash := ""
	if st.Stash != "" {
		stash = st.Stash + " " + st.StashLog
	}
	out[GitStash] = GitAction{Kind: GitStash, To: stash}
	out[GitIndex] = GitAction{Kind: GitIndex, To: st.Index}
	return out
}

// planGit plans putting the git state back to before the first effect of
// recs that recorded it. A value someone else changed since the agent
// last changed it is skipped unless force.
func (s *Store) planGit(ctx context.Context, recs []Record, force bool, plan *Plan) error {
	var first, last string
	lastOpen := false // the last effect with git state has no after record
	for i, r := range recs {
		if r.Git == "" {
			continue
		}
		if first == "" && r.Phase == PhaseBefore {
			first = r.Git
		}
		last = r.Git
		lastOpen = r.Phase == PhaseBefore && !hasAfter(recs[i+1:], r.Key())
	}
	if first == "" {
		return nil
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	curHash, cur, _ := s.captureGitLocked(ctx)
	unlock()
	if cur == nil {
		plan.Warnings = append(plan.Warnings, "the git state (HEAD, branches, tags, stash list, index) cannot be read now: it is not put back")
		return nil
	}
	if lastOpen {
		last = curHash
	}
	target, err := s.readGitStateBlob(first)
	if err != nil {
		plan.Warnings = append(plan.Warnings, "the git state before the turn is no longer in the checkpoint store: it is not put back")
		return nil
	}
	left, err := s.readGitStateBlob(last)
	if err != nil {
		return err
	}
	want, agent, now := gitValues(target), gitValues(left), gitValues(cur)
	keys := slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range []map[string]GitAction{want, agent} {
			for k := range m {
				if !seen[k] && !yield(k) {
					return
				}
				seen[k] = true
			}
		}
	})
	for _, k := range keys {
		a := want[k]
		if a.Kind == "" { // made by the turn: delete it
			a = agent[k]
			a.To = ""
		}
		a.From = now[k].To
		if a.To == agent[k].To || a.From == a.To {
			continue // the turn did not change it, or it is back already
		}
		if a.From != agent[k].To && !force {
			plan.Skipped = append(plan.Skipped, Skip{a.label(), "changed since tiny-go last changed it (--force overwrites)"})
			continue
		}
		if a.Kind == GitIndex && a.To == "" {
			continue // there was no index: leave the one there is
		}
		plan.Git = append(plan.Git, a)
	}
	return nil
}

func hasAfter(recs []Record, key string) bool {
	for _, r := range recs {
		if r.Phase == PhaseAfter && r.Key() == key {
			return true
		}
	}
	return false
}

// applyGit carries out the git actions of a plan: refs first, then HEAD
// (which may name them), the stash list, and the index last. Each action
// is checked against its planned value, so a rewind run again after an
// interruption skips what is done.
func (s *Store) applyGit(ctx context.Context, plan *Plan, force bool, sum *Summary, done int) error {
	if len(plan.Git) == 0 {
		return nil
	}
	w, _ := s.gitDirs()
	if w.off != "" {
		sum.Warnings = append(sum.Warnings, "the git state is not put back: "+w.off)
		return nil
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	w.key = "" // read it again
	_, cur, _ := s.captureGitLocked(ctx)
	unlock()
	now := gitValues(cur)
	order := map[string]int{GitRef: 0, GitHead: 1, GitStash: 2, GitIndex: 3}
	acts := slices.Clone(plan.Git)
	slices.SortStableFunc(acts, func(a, b GitAction) int { return order[a.Kind] - order[b.Kind] })
	for _, a := range acts {
		key := a.Kind
		if a.Kind == GitRef {
			key = GitRef + " " + a.Name
		}
		c := now[key].To
		switch {
		case c == a.To:
		case c == a.From || force:
			if err := s.putGit(ctx, w, a, c); err != nil {
				return fmt.Errorf("rewind %s: %w", a.label(), err)
			}
		default:
			sum.Skipped = append(sum.Skipped, Skip{a.label(), "changed while the rewind was interrupted (--force overwrites)"})
			continue
		}
		switch {
		case a.From == "":
			sum.Created = append(sum.Created, a.label())
		case a.To == "":
			sum.Deleted = append(sum.Deleted, a.label())
		default:
			sum.Restored = append(sum.Restored, a.label())
		}
		if done++; s.opts.AfterApply != nil {
			s.opts.AfterApply(done)
		}
	}
	w.key = ""
	return nil
}

// putGit sets one piece of git state; cur is its value now.
func (s *Store) putGit(ctx context.Context, w *gitWatch, a GitAction, cur string) error {
	switch a.Kind {
	case GitRef:
		if a.To == "" {
			_, err := s.userGit(ctx, nil, "update-ref", "-d", a.Name)
			return err
		}
		_, err := s.userGit(ctx, nil, "update-ref", "-m", "tiny-go rewind", a.Name, a.To)
		return err
	case GitHead:
		if ref, ok := strings.CutPrefix(a.To, "ref: "); ok {
			_, err := s.userGit(ctx, nil, "symbolic-ref", "-m", "tiny-go rewind", "HEAD", ref)
			return err
		}
		_, err := s.userGit(ctx, nil, "update-ref", "--no-deref", "-m", "tiny-go rewind", "HEAD", a.To)
		return err
	case GitStash:
		logPath := filepath.Join(w.commonDir, "logs", "refs", "stash")
		oid, logBlob, _ := strings.Cut(a.To, " ")
		if oid == "" {
			if _, err := s.userGit(ctx, nil, "update-ref", "-d", "refs/stash"); err != nil && cur != "" {
				return err
			}
			if err := os.Remove(logPath); err != nil && !os.IsNotExist(err) {
				return err
			}
			return nil
		}
		if _, err := s.userGit(ctx, nil, "update-ref", "refs/stash", oid); err != nil {
			return err
		}
		data, err := s.readBlob(logBlob)
		if err != nil {
			return err
		}
		return writeAtomic(logPath, data, 0o644, true)
	case GitIndex:
		if _, err := os.Lstat(filepath.Join(w.gitDir, "index.lock")); err == nil {
			return fmt.Errorf("git is writing the index (%s exists)", filepath.Join(w.gitDir, "index.lock"))
		}
		data, err := s.readBlob(a.To)
		if err != nil {
			return err
		}
		return writeAtomic(filepath.Join(w.gitDir, "index"), data, 0o644, true)
	}
	return fmt.Errorf("unknown git action %q", a.Kind)
}

// recordGit adds the git state now to a tree record and returns it (nil
// outside git, or when it cannot be read).
func (s *Store) recordGit(ctx context.Context, rec *Record) *repoState {
	if s.git == nil {
		return nil
	}
	unlock, err := s.lock()
	if err != nil {
		return nil
	}
	defer unlock()
	h, st, n := s.captureGitLocked(ctx)
	rec.Git, rec.Bytes = h, rec.Bytes+n
	return st
}

// seedIndex starts the private index as a copy of the user's: its stat
// data tells git add -A which files are unchanged since the user's last
// git command, so the first snapshot hashes only the changed ones instead
// of every file (a 100,000-file tree: seconds, docs/performance.md §21).
// A split or sparse index is not copied (its parts live beside it).
func (g *gitRepo) seedIndex(ctx context.Context) bool {
	// The user's index, not the private one.
	out, err := gitcmd.Repo(ctx, g.cwd, nil, "rev-parse", "--git-path", "index", "--git-dir").Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 2 {
		return false
	}
	for i, l := range lines {
		if !filepath.IsAbs(l) {
			lines[i] = filepath.Join(g.cwd, l)
		}
	}
	if shared, _ := filepath.Glob(filepath.Join(lines[1], "sharedindex.*")); len(shared) > 0 {
		return false
	}
	data, err := os.ReadFile(lines[0])
	if err != nil || !bytes.HasPrefix(data, []byte("DIRC")) || bytes.Contains(data, []byte("sdir")) {
		return false
	}
	return writeAtomic(g.index, data, fileMode, false) == nil
}

// readHead starts the private index as HEAD's tree (resolved in the
// user's repository; the private directory has no refs); false in a
// repository without a commit.
func (g *gitRepo) readHead(ctx context.Context) bool {
	out, err := gitcmd.Repo(ctx, g.cwd, nil, "rev-parse", "--verify", "-q", "HEAD^{tree}").Output()
	if err != nil {
		return false
	}
	_, _, err = g.run(ctx, nil, "read-tree", strings.TrimSpace(string(out)))
	return err == nil
}
