package checkpoint

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// Each line of a checkpoint index is sealed with tiny-go's key: the
// record's JSON with `,"mac":"<hex>"` added before its closing brace. A
// fork copies lines as they are, so the seal names no session. What a
// rewind reads from a line tiny-go did not seal is refused: a line whose
// seal does not match is left out; an unsealed line (written before the
// seal, or planted) keeps only the paths inside the tree, which a rewind
// resolves beneath it (put_beneath.go), never a path outside it.

const indexPurpose = "checkpoint-index"

var macField = []byte(`,"mac":"`)

// sealIndexLine adds the seal to a record's JSON object.
func sealIndexLine(line []byte) ([]byte, error) {
	mac, err := statekey.Hex(indexPurpose, line)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(line)+len(macField)+len(mac)+2)
	out = append(out, line[:len(line)-1]...)
	out = append(append(append(out, macField...), mac...), '"', '}')
	return out, nil
}

// What openIndexLine found of a line's seal.
const (
	sealNone   = iota // none: written before the seal, or planted
	sealOK            // tiny-go's
	sealForged        // one that does not match
)

// openIndexLine returns the record's JSON as it was sealed, and what its
// seal is.
func openIndexLine(line []byte) (json []byte, seal int, err error) {
	const hexLen = 64
	tail := len(macField) + hexLen + 2
	if len(line) < tail+1 || !bytes.Equal(line[len(line)-tail:len(line)-hexLen-2], macField) || !bytes.HasSuffix(line, []byte(`"}`)) {
		return line, sealNone, nil
	}
	mac := line[len(line)-hexLen-2 : len(line)-2]
	if _, herr := hex.DecodeString(string(mac)); herr != nil {
		return line, sealNone, nil
	}
	orig := append(append([]byte{}, line[:len(line)-tail]...), '}')
	ok, err := statekey.Check(string(mac), indexPurpose, orig)
	if err != nil {
		return nil, sealNone, err
	}
	if !ok {
		return nil, sealForged, nil
	}
	return orig, sealOK, nil
}

// checkIndexRecord keeps of an unsealed record only its paths inside the
// tree; why says what was refused ("" when nothing was).
func checkIndexRecord(rec Record, sealed bool) (Record, string) {
	if sealed {
		return rec, ""
	}
	kept := rec.Files[:0:0]
	dropped := 0
	for _, f := range rec.Files {
		if filepath.IsLocal(f.Path) {
			kept = append(kept, f)
		} else {
			dropped++
		}
	}
	if dropped == 0 {
		return rec, ""
	}
	rec.Files = kept
	return rec, fmt.Sprintf("carries no seal of tiny-go's key (written before the index was sealed, or planted): its %d path(s) outside the tree were refused and are not rewound", dropped)
}
