package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/journal"
)

// A journaled transaction (docs/checkpoints.md, "Commands on the tree,
// journaled"): the command ran on the tree itself, and package journal
// kept what each of its changes destroyed. Once it has ended, the journal
// is turned into the same states an overlay transaction leaves
// (states.json, kept originals in orig/), so rewinds, their recovery and
// their records need nothing new. The conversion undoes the journal on a
// virtual tree, newest record first, as journal.Restore would on the real
// one, and costs what the command changed: a kept inode is hard-linked
// into orig/, and only a file the command appended to or wrote in place
// is copied, up to its old length.

const journalDirName = "journal"

// vkind is what a path held before the command, on the virtual tree.
type vkind int

const (
	vTree   vkind = iota // the inode the tree holds now at src
	vAbsent              // nothing
	vData                // the inode the journal kept at src (unlinked, or an emptied directory)
	vLost                // moved out of the tree by the command: not kept
)

// vent is a path's state before the command, as a name: which inode it
// held (its content and mode before are the inode's, inodeStates).
type vent struct {
	kind vkind
	src  string // vTree: the current path (relative); vData: the journal's file
}

// vtree maps the paths the journal names to what they held before.
type vtree struct {
	m map[string]*vent
}

// resolve is what p held before, as far as the records undone so far say:
// its own entry, else its nearest named ancestor's, else p unchanged.
func (v *vtree) resolve(p string) *vent {
	if e, ok := v.m[p]; ok {
		return e
	}
	for a := path.Dir(p); ; a = path.Dir(a) {
		if e, ok := v.m[a]; ok {
			if e.kind == vTree {
				return &vent{kind: vTree, src: path.Join(e.src, strings.TrimPrefix(p, a+"/"))}
			}
			return &vent{kind: vAbsent} // inside a name made or an emptied directory
		}
		if a == "." || a == "/" {
			return &vent{kind: vTree, src: p}
		}
	}
}

// take removes and returns the entries below p.
func (v *vtree) take(p string) map[string]*vent {
	out := map[string]*vent{}
	for k, e := range v.m {
		if strings.HasPrefix(k, p+"/") {
			out[strings.TrimPrefix(k, p+"/")] = e
			delete(v.m, k)
		}
	}
	return out
}

func (v *vtree) put(p string, e *vent, below map[string]*vent) {
	v.take(p)
	v.m[p] = e
	for sub, se := range below {
		v.m[p+"/"+sub] = se
	}
}

// undo applies one name change backwards; p and to are relative. A
// change of content or mode leaves the name alone (it is the inode's).
func (v *vtree) undo(e journal.Entry, p, to string) {
	switch e.Op {
	case "absent":
		v.put(p, &vent{kind: vAbsent}, nil)
	case "gone":
		v.put(p, &vent{kind: vData, src: e.Data}, nil)
	case "rename":
		moved, below := v.resolve(to), v.take(to)
		v.put(to, &vent{kind: vAbsent}, nil)
		v.put(p, moved, below)
	case "exchange":
		a, belowA := v.resolve(p), v.take(p)
		b, belowB := v.resolve(to), v.take(to)
		v.put(p, b, belowB)
		v.put(to, a, belowA)
	}
}

// inodeStates are, per inode the command changed, the records of its
// content (oldest first) and its mode and times before the command (the
// oldest record that kept them).
type inodeStates struct {
	content map[uint64][]journal.Entry
	meta    map[uint64]*journal.Entry
}

func newInodeStates(entries []journal.Entry) inodeStates {
	in := inodeStates{content: map[uint64][]journal.Entry{}, meta: map[uint64]*journal.Entry{}}
	for i := range entries {
		e := &entries[i]
		if e.Ino == 0 || !e.HasMeta {
			continue
		}
		if _, ok := in.meta[e.Ino]; !ok {
			in.meta[e.Ino] = e
		}
		switch e.Op {
		case "file", "len", "ranges":
			in.content[e.Ino] = append(in.content[e.Ino], *e)
		}
	}
	return in
}

// journalStates turns the journal of transaction id into its states,
// keeping the originals in orig/.
func (s *Store) journalStates(id string) (*txStates, error) {
	dir := filepath.Join(s.TxRoot(), id)
	entries, err := journal.Entries(filepath.Join(dir, journalDirName))
	if errors.Is(err, fs.ErrNotExist) {
		return &txStates{}, nil // killed before its command began: it changed nothing
	}
	if err != nil {
		return nil, err
	}
	v := &vtree{m: map[string]*vent{}}
	touched := map[string]bool{} // paths whose inode's content or mode changed
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		p, ok := s.journalRel(e.Path)
		if !ok {
			continue // outside the tree: never journaled on purpose
		}
		to := ""
		if e.To != "" {
			if to, ok = s.journalRel(e.To); !ok {
				v.put(p, &vent{kind: vLost}, nil) // moved out of the tree: not kept
				continue
			}
		}
		switch e.Op {
		case "file", "len", "ranges", "meta":
			touched[p] = true
		default:
			v.undo(e, p, to)
		}
	}
	c := &journalConv{s: s, id: id, orig: filepath.Join(dir, "orig"), st: &txStates{Kept: map[string]string{}}, in: newInodeStates(entries), sameAs: map[string]string{}}
	for k, e := range v.m {
		if e.kind == vTree && e.src != k {
			if c.st.Renamed == nil {
				c.st.Renamed = map[string]string{}
			}
			c.st.Renamed[e.src] = k
		}
	}
	for p := range touched {
		if _, ok := v.m[p]; !ok {
			v.m[p] = v.resolve(p)
		}
	}
	if err := c.states(v); err != nil {
		return nil, err
	}
	c.st.Bytes += dirSize(filepath.Join(dir, journalDirName))
	return c.st, nil
}

// states lists every path of the domain before and after the command.
func (c *journalConv) states(v *vtree) error {
	before, after := map[string]File{}, map[string]File{}
	paths := c.domain(v)
	for _, p := range paths {
		bf, err := c.before(p, v.resolve(p))
		if err != nil {
			return fmt.Errorf("keeping the original of %s: %w", p, err)
		}
		before[p] = bf
	}
	for _, p := range paths {
		af, err := c.after(p)
		if err != nil {
			return err
		}
		if before[p].Absent && af.Absent {
			delete(before, p)
			continue
		}
		after[p] = af
	}
	c.st.Before, c.st.After = bothSides(before, after)
	return nil
}

// after is p's state in the tree now: hashed, or addressed to the kept
// original it is the same file as (sameAs).
func (c *journalConv) after(p string) (File, error) {
	if q, ok := c.sameAs[p]; ok {
		if fi, err := os.Lstat(c.s.Abs(p)); err == nil && fi.Mode().IsRegular() {
			if from, moved := movedFrom(c.st.Renamed, p); moved && from == q {
				return File{Path: p, Mode: uint32(fi.Mode().Perm()), MTime: fi.ModTime().UnixNano(), Hash: schemeTx + c.id + "/" + q}, nil
			}
		}
	}
	af, data, err := c.s.stat(p)
	if err != nil {
		return File{}, err
	}
	if data != nil {
		af.Hash = sha256Hash(data)
	}
	return af, nil
}

// journalRel is an absolute path of the journal relative to the tree;
// false outside it, and for tiny-go's own folder.
func (s *Store) journalRel(abs string) (string, bool) {
	rel := s.Rel(abs) // absolute outside the tree, and for the tree itself
	if filepath.IsAbs(rel) || rel == ".tiny-agent" || strings.HasPrefix(rel, ".tiny-agent/") {
		return "", false
	}
	return rel, true
}

type journalConv struct {
	s    *Store
	id   string
	orig string
	st   *txStates
	in   inodeStates
	// sameAs maps a path of the tree now to the path whose kept original
	// is its content (a file moved, not changed): its state after is
	// addressed to it, not read and hashed (a moved folder of 500 MB).
	sameAs map[string]string
}

// domain is every path whose state may differ: those the records name,
// and what lies below a directory that moved or that the command made.
func (c *journalConv) domain(v *vtree) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "." && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for k, e := range v.m {
		add(k)
		if e.kind == vTree && e.src == k {
			continue // its inode changed in place: what is below did not move
		}
		c.walk(k, func(sub string) { add(path.Join(k, sub)) })
		if e.kind == vTree {
			c.walk(e.src, func(sub string) { add(path.Join(k, sub)); add(path.Join(e.src, sub)) })
		}
	}
	return out
}

// walk calls fn with each path below rel in the tree now, relative to it.
func (c *journalConv) walk(rel string, fn func(sub string)) {
	root := c.s.Abs(rel)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		sub, _ := filepath.Rel(root, p)
		fn(filepath.ToSlash(sub))
		return nil
	})
}

// before is the File a path held before the command, its content kept
// at orig/<p>: the inode's own file when the command did not change its
// content (a hard link, no copy), else rebuilt from its records.
func (c *journalConv) before(p string, e *vent) (File, error) {
	var src string
	switch e.kind {
	case vAbsent:
		return File{Path: p, Absent: true}, nil
	case vLost:
		return File{Path: p, Missing: "moved out of the working directory by the command"}, nil
	case vTree:
		src = c.s.Abs(e.src)
	case vData:
		src = e.src
	}
	var sb unix.Stat_t
	if err := unix.Lstat(src, &sb); err != nil {
		if e.kind == vTree {
			return File{Path: p, Absent: true}, nil // neither there before nor now
		}
		return File{Path: p, Missing: "its kept inode is gone"}, nil
	}
	f := fileOf(p, &sb, c.in.meta[sb.Ino])
	if f.Dir || f.Special != "" || f.Missing != "" {
		return f, nil
	}
	chain := c.in.content[sb.Ino]
	if len(chain) > 0 && e.kind == vTree && e.src == p && patchable(chain, c.s.opts.MaxFileSize) {
		return c.patched(p, f, &sb, chain)
	}
	if len(chain) > 0 {
		return c.rebuilt(p, src, f, chain)
	}
	var err error
	if e.kind == vTree && !f.Link && sb.Size < linkAbove {
		// A file of the tree, moved or given another mode: a hard link
		// would share what a later command writes in place, so a small
		// one is copied.
		f, err = c.rebuilt(p, src, f, []journal.Entry{{Op: "len", Size: sb.Size}})
	} else {
		f, err = c.linked(p, src, f, e.kind == vTree)
	}
	if err == nil && e.kind == vTree && f.Missing == "" {
		c.sameAs[e.src] = p // its content now is this kept original's
	}
	return f, err
}

// linkAbove is the size from which a file of the tree the command moved
// is kept by a hard link rather than a copy: no disk, but a later write
// in place changes it too (a rewind then says so, and skips it).
const linkAbove = 1 << 20

// fileOf is a path's File for the inode sb, with the mode and
// modification time meta kept (nil: the inode's own).
func fileOf(p string, sb *unix.Stat_t, meta *journal.Entry) File {
	mode, mtime := uint32(sb.Mode), unix.TimespecToNsec(sb.Mtim) // uint16 on macOS
	if meta != nil {
		mode, mtime = meta.Mode, meta.Mtime
	}
	f := File{Path: p, Mode: mode & 0o777, MTime: mtime}
	switch uint32(sb.Mode) & unix.S_IFMT {
	case unix.S_IFDIR:
		f.Dir = true
	case unix.S_IFIFO:
		f.Special = "fifo"
	case unix.S_IFSOCK:
		f.Special = "socket"
	case unix.S_IFLNK:
		f.Link = true
	case unix.S_IFREG:
	default:
		f.Missing = "a device, not a regular file"
	}
	return f
}

// linked keeps src as orig/<p> by a hard link: no copy. A link to a file
// of the tree is stamped by its modification time (a rename moves its
// ctime).
func (c *journalConv) linked(p, src string, f File, inTree bool) (File, error) {
	dst, err := c.dest(p)
	if err != nil {
		return File{}, err
	}
	if err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, 0); err != nil {
		return File{}, err
	}
	return c.kept(p, f, inTree)
}

// rebuilt writes orig/<p> as the inode's content before the command:
// its oldest whole pre-image, or its content now cut and patched back
// from the newest record to the oldest.
func (c *journalConv) rebuilt(p, src string, f File, chain []journal.Entry) (File, error) {
	first := 0
	for i, e := range chain {
		if e.Op == "file" {
			first = i
			break
		}
	}
	size, limit := chain[0].Size, int64(0)
	for _, e := range chain {
		limit = max(limit, e.Size)
	}
	if chain[first].Op == "file" {
		size = int64(len(chain[first].Inline))
		if chain[first].Data != "" {
			if fi, err := os.Stat(chain[first].Data); err == nil {
				size = fi.Size()
			}
		}
	}
	if size > c.s.opts.MaxFileSize || limit > c.s.opts.MaxFileSize {
		f.Missing = "larger than " + formatBytes(c.s.opts.MaxFileSize)
		return f, nil
	}
	dst, err := c.dest(p)
	if err != nil {
		return File{}, err
	}
	if err := os.WriteFile(dst, nil, 0o600); err != nil {
		return File{}, err
	}
	if err := rebuild(src, dst, chain, first, limit); err != nil {
		return File{}, err
	}
	c.st.Bytes += size
	return c.kept(p, f, false)
}

// rebuild undoes chain[first:] if chain[first] is a whole pre-image, else
// the whole chain, on a copy of src (its first limit bytes) in dst.
func rebuild(src, dst string, chain []journal.Entry, first int, limit int64) error {
	end := len(chain)
	if chain[first].Op == "file" {
		e := chain[first]
		if e.Data == "" {
			if err := os.WriteFile(dst, e.Inline, 0o600); err != nil {
				return err
			}
		} else if err := copyInto(e.Data, dst, 1<<62); err != nil {
			return err
		}
		end = first
	} else if err := copyInto(src, dst, limit); err != nil {
		return err
	}
	for i := end - 1; i >= 0; i-- {
		e := chain[i]
		var err error
		switch e.Op {
		case "len":
			err = os.Truncate(dst, e.Size)
		case "ranges":
			err = journal.PutSpans(e.Data, dst, e.Size)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// kept addresses orig/<p> and stamps it.
func (c *journalConv) kept(p string, f File, linkStamped bool) (File, error) {
	var sb unix.Stat_t
	if err := unix.Lstat(filepath.Join(c.orig, filepath.FromSlash(p)), &sb); err != nil {
		return File{}, err
	}
	if linkStamped {
		c.st.Kept[p] = linkStamp(&sb)
	} else {
		c.st.Kept[p] = stamp(&sb)
	}
	f.Hash = schemeTx + c.id + "/" + p
	return f, nil
}

func (c *journalConv) dest(p string) (string, error) {
	dst := filepath.Join(c.orig, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", err
	}
	return dst, nil
}

// copyInto copies the first limit bytes of src into dst (truncating it).
func copyInto(src, dst string, limit int64) error {
	in, err := os.Open(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return os.WriteFile(dst, nil, 0o600)
		}
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(out, in, limit); err != nil && !errors.Is(err, io.EOF) {
		out.Close()
		return err
	}
	return out.Close()
}
