//go:build linux && (amd64 || arm64)

package journal

import (
	"fmt"
	"os"
	"path/filepath"
)

// Entry is one record of a journal, for a reader that turns a journal
// into states (the checkpoint store's rewind states): what the command's
// change at Path destroyed, in the order the changes went on.
type Entry struct {
	// Op is file (a whole pre-image at Data, or Inline), len (the length
	// before, Size), ranges (the spans overwritten, at Data, and the
	// length before), absent (a name the command made), gone (an inode
	// the command unlinked, or an empty directory it removed, kept at
	// Data), rename (Path moved to To), exchange, or meta (mode, owner
	// and times of Path before the first change of its inode).
	Op   string
	Path string // absolute, as tiny-go sees the tree
	To   string
	Data string // absolute, inside the journal
	Size int64
	// Ino is the inode the record is about: whose content, mode or times
	// it keeps (under any of its names), or that moved.
	Ino  uint64
	Mode uint32 // with the file type bits
	UID  int
	GID  int
	// Atime and Mtime are Unix nanoseconds; HasMeta says the record
	// carries mode, owner and times at all.
	Atime, Mtime int64
	HasMeta      bool
	Inline       []byte
}

// Entries reads the journal in dir, oldest first; a torn last line (a
// change that never went on) is left out.
func Entries(dir string) ([]Entry, error) {
	recs, err := readLog(filepath.Join(dir, logName))
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(recs))
	for _, r := range recs {
		e := Entry{Op: r.Op, Path: r.Path, To: r.To, Size: r.Size, Ino: r.Ino, Mode: r.Mode, UID: r.UID, GID: r.GID, Atime: r.Atime, Mtime: r.Mtime, Inline: r.Inline}
		e.HasMeta = r.Mode != 0
		if r.Data != "" {
			if !filepath.IsLocal(r.Data) {
				return nil, fmt.Errorf("journal: a record names %q, outside the journal", r.Data)
			}
			e.Data = filepath.Join(dir, r.Data)
		}
		out = append(out, e)
	}
	return out, nil
}

// Changed says whether the journal in dir holds a record (a command
// that changed nothing leaves an empty log, or none): one stat, where
// Entries reads the log.
func Changed(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, logName))
	return err == nil && fi.Size() > 0
}

// PutSpans writes back, into dst, the spans a ranges entry kept at data,
// oldest last, and sets dst's length to size: dst becomes what it was
// before the writes, given what it was after them.
func PutSpans(data, dst string, size int64) error {
	return putRanges(data, record{Path: dst, Size: size})
}
