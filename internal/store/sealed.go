package store

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// SealRecords writes the integrity records tiny-go keeps for data (the
// session file's bytes, one record per line), sealed with its key, and
// sets the mark beside the key as a crash right after data's last line
// leaves it: for tests that rebuild a session as tiny-go would have left
// it, and for a fleet worker that restores a session prefix from its blob
// store.
func SealRecords(sessionPath string, data []byte) error {
	dir, err := SidecarDir(sessionPath, true)
	if err != nil {
		return err
	}
	var out []byte
	h := sha256.New()
	start := 0
	for i, b := range data {
		if b != '\n' {
			continue
		}
		h.Write(data[start : i+1])
		start = i + 1
		r := record{size: int64(i + 1)}
		h.Sum(r.digest[:0])
		out = append(out, r.line()...)
	}
	if err := writeSidecarAtomically(dir, IntegrityFile, out); err != nil {
		return fmt.Errorf("integrity records: %w", err)
	}
	return statekey.Mark(sealedKind, filepath.Base(sessionPath), []byte(strconv.Itoa(start)))
}
