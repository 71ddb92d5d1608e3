package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// for tests and one machine
	"gocloud.dev/gcerrors"
)

// Blobs is the durable store of a fleet: sessions, their sidecars,
// workspace snapshots and final diffs, under one bucket URL (file://,
// s3://, gs://, azblob:// — the drivers the binary links).
type Blobs struct {
	b *blob.Bucket
	// OpTimeout bounds each operation (default DefaultBlobTimeout, plus
	// a second per MB written): a store that stops answering fails the
	// task with the operation's name, instead of hanging it until its
	// time is up.
	OpTimeout time.Duration
}

// DefaultBlobTimeout is the time one blob operation may take.
const DefaultBlobTimeout = 30 * time.Second

// op is ctx bounded by the operation's time for n bytes.
func (s *Blobs) op(ctx context.Context, n int) (context.Context, time.Duration, context.CancelFunc) {
	d := s.OpTimeout
	if d <= 0 {
		d = DefaultBlobTimeout
	}
	d += time.Duration(n>>20) * time.Second
	c, cancel := context.WithTimeout(ctx, d)
	return c, d, cancel
}

// opFailed is one line for a failed operation: a time-out says so, with
// the operation, so a slow store is told apart from a dead worker.
func opFailed(ctx, opCtx context.Context, what, key string, d time.Duration, err error) error {
	if ctx.Err() == nil && opCtx.Err() != nil {
		return fmt.Errorf("blob store: %s %s took longer than %s (is the store reachable and fast enough?): %w", what, key, d, err)
	}
	return fmt.Errorf("blob store: %s %s: %w", what, key, err)
}

// OpenBlobs opens the bucket at url.
func OpenBlobs(ctx context.Context, url string) (*Blobs, error) {
	if url == "" {
		return nil, errors.New("no blob store: pass --blob URL (file:///shared/dir, s3://bucket, gs://bucket)")
	}
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("blob store %s: %w", url, err)
	}
	return &Blobs{b: b}, nil
}

// Close closes the bucket.
func (s *Blobs) Close() error { return s.b.Close() }

// Put writes key atomically: readers see the old object or the new one.
func (s *Blobs) Put(ctx context.Context, key string, data []byte) error {
	c, d, cancel := s.op(ctx, len(data))
	defer cancel()
	if err := s.b.WriteAll(c, key, data, nil); err != nil {
		return opFailed(ctx, c, "write", key, d, err)
	}
	return nil
}

// Get reads key; ok is false when it does not exist.
func (s *Blobs) Get(ctx context.Context, key string) (data []byte, ok bool, err error) {
	c, d, cancel := s.op(ctx, 0)
	defer cancel()
	data, err = s.b.ReadAll(c, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, opFailed(ctx, c, "read", key, d, err)
	}
	return data, true, nil
}

// Delete removes key; a missing key is no error.
func (s *Blobs) Delete(ctx context.Context, key string) error {
	c, d, cancel := s.op(ctx, 0)
	defer cancel()
	err := s.b.Delete(c, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return opFailed(ctx, c, "delete", key, d, err)
	}
	return nil
}

// Exists says whether key is in the store.
func (s *Blobs) Exists(ctx context.Context, key string) (bool, error) {
	c, d, cancel := s.op(ctx, 0)
	defer cancel()
	ok, err := s.b.Exists(c, key)
	if err != nil {
		return false, opFailed(ctx, c, "look up", key, d, err)
	}
	return ok, nil
}

// Size is the size in bytes of key's content.
func (s *Blobs) Size(ctx context.Context, key string) (int64, error) {
	c, d, cancel := s.op(ctx, 0)
	defer cancel()
	a, err := s.b.Attributes(c, key)
	if err != nil {
		return 0, opFailed(ctx, c, "look up", key, d, err)
	}
	return a.Size, nil
}
