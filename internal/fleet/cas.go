package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/atomicfile"
)

// contentStore keeps content in the blob store under its sha256 (casKey),
// so content is stored once however many steps, tasks and repeats make
// it. A worker remembers the hashes it knows are stored and keeps what it
// fetched in a local folder, so it asks the store for each at most once.
type contentStore struct {
	blobs *Blobs
	dir   string // the worker's local copies ("" for none)
	known sync.Map
}

func sha(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// put stores data, whose sha256 is hash, unless the store has it.
func (c *contentStore) put(ctx context.Context, hash string, data []byte) error {
	if _, ok := c.known.Load(hash); ok {
		return nil
	}
	ok, err := c.blobs.Exists(ctx, casKey(hash))
	if err != nil {
		return err
	}
	if !ok {
		if err := c.blobs.Put(ctx, casKey(hash), data); err != nil {
			return err
		}
	}
	c.known.Store(hash, true)
	return nil
}

// get is the content of hash: the local copy, else the store's (checked
// against its hash, then kept).
func (c *contentStore) get(ctx context.Context, hash string) ([]byte, error) {
	local := ""
	if c.dir != "" {
		local = filepath.Join(c.dir, hash[:2], hash)
		if data, err := os.ReadFile(local); err == nil && sha(data) == hash {
			return data, nil
		}
	}
	data, ok, err := c.blobs.Get(ctx, casKey(hash))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("blob store: %s is missing", casKey(hash))
	}
	if sha(data) != hash {
		return nil, fmt.Errorf("blob store: %s does not hold the content of its hash", casKey(hash))
	}
	c.known.Store(hash, true)
	if local != "" {
		_ = writeAtomic(local, data)
	}
	return data, nil
}

// writeAtomic writes path by a rename, so a reader never sees half of it.
func writeAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{DirPerm: 0o755})
}
