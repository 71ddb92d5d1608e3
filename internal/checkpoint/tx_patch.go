package checkpoint

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/beneath"
	"github.com/tiny-agent/tiny-go/internal/journal"
)

// A file too big for a rewind to read whole (Options.MaxFileSize) that a
// journaled command appended to or wrote in place is put back in place.
// Its earlier content is kept as the way back from the file the command
// left: the lengths it had and the bytes its writes overwrote, in the
// order they apply (patch/<p>.json and patch/<p>.<i> in the transaction's
// folder), never a copy of it. A rewind applies it only to the inode the
// command left, as it left it (device, inode, size, modification time),
// and the patches of several turns one after the other, newest first.
// Applying them again, after a rewind cut short, gives the same file:
// each writes the same bytes at the same offsets, then cuts.

// patch is patch/<p>.json.
type patch struct {
	After bigStamp  `json:"after"` // the file as the command left it
	Ops   []patchOp `json:"ops"`
}

// patchOp writes back the spans in Data (in patch/; none for an append),
// then cuts the file to Size.
type patchOp struct {
	Size int64  `json:"size"`
	Data string `json:"data,omitempty"`
}

// bigStamp names one state of a big file without reading it. Not the
// kept originals' stamp (txsealed.go): a rewind gives back the size and
// modification time, not the ctime.
type bigStamp struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"`
}

func stampOf(sb *unix.Stat_t) bigStamp {
	return bigStamp{Dev: uint64(sb.Dev), Ino: sb.Ino, Size: sb.Size, MTime: unix.TimespecToNsec(sb.Mtim)}
}

// sameInode says whether b is a state of sb's inode.
func (b bigStamp) sameInode(sb *unix.Stat_t) bool { return b.Dev == uint64(sb.Dev) && b.Ino == sb.Ino }

// patchable says whether chain, a file's records with no whole pre-image,
// is past what a rewind reads whole.
func patchable(chain []journal.Entry, maxSize int64) bool {
	limit := int64(0)
	for _, e := range chain {
		if e.Op == "file" {
			return false
		}
		limit = max(limit, e.Size)
	}
	return limit > maxSize
}

// patched keeps p's earlier content as a patch on the file src the
// command left (sb).
func (c *journalConv) patched(p string, f File, sb *unix.Stat_t, chain []journal.Entry) (File, error) {
	dir := filepath.Join(filepath.Dir(c.orig), "patch")
	pt := patch{After: stampOf(sb)}
	for i := len(chain) - 1; i >= 0; i-- {
		op := patchOp{Size: chain[i].Size}
		if chain[i].Op == "ranges" {
			op.Data = fmt.Sprintf("%s.%d", filepath.FromSlash(p), i)
			n, err := linkOrCopy(chain[i].Data, filepath.Join(dir, op.Data))
			if err != nil {
				return File{}, err
			}
			c.st.Bytes += n
		}
		pt.Ops = append(pt.Ops, op)
	}
	b, err := json.Marshal(pt)
	if err != nil {
		return File{}, err
	}
	dst := filepath.Join(dir, filepath.FromSlash(p)+".json")
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return File{}, err
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		return File{}, err
	}
	c.st.Bytes += int64(len(b))
	f.Patch = schemeTx + c.id + "/" + p
	return f, nil
}

// linkOrCopy puts src, a file of the journal, at dst: a hard link (no
// disk beyond the journal's, counted already), else a copy (its size).
func linkOrCopy(src, dst string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return 0, err
	}
	if os.Link(src, dst) == nil {
		return 0, nil
	}
	fi, err := os.Stat(src)
	if err != nil {
		return 0, err
	}
	return fi.Size(), copyInto(src, dst, 1<<62)
}

// loadPatches reads the patches chain addresses, newest first, each with
// the folder its spans are in.
func (s *Store) loadPatches(chain []string) ([]patch, []string, error) {
	pts, dirs := make([]patch, len(chain)), make([]string, len(chain))
	for i, h := range chain {
		id, rel, err := txAddress(h)
		if err != nil {
			return nil, nil, err
		}
		dirs[i] = filepath.Join(s.TxRoot(), id, "patch")
		b, err := os.ReadFile(filepath.Join(dirs[i], filepath.FromSlash(rel)+".json"))
		if err == nil {
			err = json.Unmarshal(b, &pts[i])
		}
		if err == nil && len(pts[i].Ops) == 0 {
			err = fmt.Errorf("an empty patch: %s", h)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return pts, dirs, nil
}

// planPatched plans putting p back from the patches of target's turn and
// of every later one that changed it, newest first; a state any of them
// did not keep so, or a file changed since, is a skip that says so.
func (p *planner) planPatched(plan *Plan, pairs []*pair, path string, target File) {
	var chain []string
	for _, pr := range pairs {
		f, ok := p.coveredBy(pr.before, path)
		switch {
		case !ok:
		case f.Patch == "":
			plan.Skipped = append(plan.Skipped, Skip{path, "a later change of it was not kept as a patch (" + cmp.Or(f.Missing, "kept whole") + "), so its earlier content cannot be put back in place"})
			return
		default:
			chain = append(chain, f.Patch)
		}
	}
	slices.Reverse(chain)
	pts, _, err := p.s.loadPatches(chain)
	if err != nil {
		plan.Skipped = append(plan.Skipped, Skip{path, "its earlier content is no longer in the checkpoint store"})
		return
	}
	var sb unix.Stat_t
	if err := unix.Lstat(p.s.Abs(path), &sb); err != nil || !pts[0].After.sameInode(&sb) {
		plan.Skipped = append(plan.Skipped, Skip{path, "replaced since tiny-go last changed it (its earlier content is kept only as the way back from the file as that command left it)"})
		return
	}
	if patchDone(&sb, target, pts) {
		return // already as it was
	}
	if stampOf(&sb) != pts[0].After {
		plan.Skipped = append(plan.Skipped, Skip{path, "changed since tiny-go last changed it (its earlier content is kept only as the way back from the file as that command left it)"})
		return
	}
	from := File{Path: path, Mode: uint32(sb.Mode) & 0o777, Missing: "larger than " + formatBytes(p.s.opts.MaxFileSize)}
	plan.Actions = append(plan.Actions, Action{Path: path, Op: OpRestore, From: from, To: target, Patches: chain})
}

// patchDone says whether the file is target already: the length the
// oldest of pts cuts it to, target's mode and modification time (a patch
// applied in place keeps the inode).
func patchDone(sb *unix.Stat_t, target File, pts []patch) bool {
	oldest := pts[len(pts)-1].Ops
	return sb.Size == oldest[len(oldest)-1].Size && unix.TimespecToNsec(sb.Mtim) == target.MTime && uint32(sb.Mode)&0o777 == target.Mode
}

// applyPatches puts a.Path back in place from a.Patches, newest first,
// on the inode the plan saw (false: another one is there now).
func (s *Store) applyPatches(a Action) (bool, error) {
	root, err := beneath.Root(s.cwd)
	if err != nil {
		return false, err
	}
	defer unix.Close(root)
	dir, name, err := beneath.Parent(root, a.Path, false)
	if err != nil {
		return false, err
	}
	defer unix.Close(dir)
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	f := os.NewFile(uintptr(fd), a.Path)
	defer f.Close()
	var sb unix.Stat_t
	if err := unix.Fstat(fd, &sb); err != nil {
		return false, err
	}
	pts, dirs, err := s.loadPatches(a.Patches)
	if err != nil || !pts[0].After.sameInode(&sb) {
		return false, err
	}
	if patchDone(&sb, a.To, pts) {
		return true, nil
	}
	for i, pt := range pts {
		if err := applyPatch(f, pt, dirs[i]); err != nil {
			return false, err
		}
	}
	if err := unix.Fchmod(fd, a.To.Mode); err != nil {
		return false, err
	}
	ts := unix.NsecToTimespec(a.To.MTime)
	if err := unix.UtimesNanoAt(dir, name, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, err
	}
	return true, f.Sync()
}

// applyPatch applies one patch to f, its spans in dir.
func applyPatch(f *os.File, pt patch, dir string) error {
	for _, op := range pt.Ops {
		var err error
		if op.Data == "" {
			err = f.Truncate(op.Size)
		} else {
			err = journal.PutSpansTo(filepath.Join(dir, op.Data), f, op.Size)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
