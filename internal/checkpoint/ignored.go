package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// Git-ignored files (.env, a local database, build output, node_modules)
// are in no git tree, yet a command can delete them for good (git clean
// -fdx, rm -rf). With change tracking on, the baseline of a git work tree
// is the git tree of the tracked and untracked files plus a manifest on
// top of it that holds the ignored files, so the tracked snapshots cover
// every file of the working directory (Record.All). Their content is
// copied into the store once, up to a quarter of the store's cap; what
// does not fit is recorded as missing and named by a rewind.

// withIgnoredLocked stands a manifest of the ignored files on the git
// snapshot rec. On failure rec is returned as it was (ignored files are
// then not covered, as before). The caller holds the store lock.
func (s *Store) withIgnoredLocked(ctx context.Context, rec Record) Record {
	oid, ok := strings.CutPrefix(rec.Tree, schemeGit)
	if !ok || rec.Missing != "" {
		return rec
	}
	out, _, err := s.git.run(ctx, nil, "ls-files", "-z", "--others", "--ignored", "--exclude-standard")
	if err != nil {
		return rec
	}
	m := &manifest{Tree: oid, Taken: time.Now().UnixNano()}
	budget := s.opts.Cap / 4
	var added int64
	for _, p := range bytes.Split(out, []byte{0}) {
		rel := string(p) // relative to cwd, as ls-files prints it
		if rel == "" || rel == stateDirName || strings.HasPrefix(rel, stateDirName+"/") || ctx.Err() != nil {
			continue
		}
		fi, err := os.Lstat(s.Abs(rel))
		if err != nil {
			continue
		}
		mf := s.fileState(rel, fi)
		if mf.Absent {
			continue
		}
		data, err := s.content(rel, mf)
		switch {
		case errors.Is(err, errTooLarge):
			mf.Missing = "larger than " + formatBytes(s.opts.MaxFileSize)
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			mf.Missing = "unreadable: " + rootCause(err)
		case added+int64(len(data)) > budget:
			mf.Missing = "git-ignored files past a quarter of the checkpoint store's cap are not kept (raise TINY_CHECKPOINT_CAP)"
		default:
			h, n, err := s.putBlob(data)
			if err != nil {
				mf.Missing = "not stored: " + rootCause(err)
				break
			}
			mf.Hash, added = h, added+n
		}
		m.Files = append(m.Files, mf)
	}
	if ctx.Err() != nil {
		return rec
	}
	slices.SortFunc(m.Files, func(a, b manifestFile) int { return strings.Compare(a.Path, b.Path) })
	data, err := json.Marshal(m)
	if err != nil {
		return rec
	}
	h, n, err := s.putBlob(data)
	if err != nil {
		return rec
	}
	s.accountLocked(added + n)
	rec.Tree, rec.All, rec.Bytes = "plain:"+h, true, rec.Bytes+added+n
	return rec
}
