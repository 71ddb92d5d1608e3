package fleet

import (
	"context"
	"errors"
	"fmt"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// for tests and one machine
	"gocloud.dev/gcerrors"
)

// Blobs is the durable store of a fleet: sessions, their sidecars,
// workspace snapshots and final diffs, under one bucket URL (file://,
// s3://, gs://, azblob:// — the drivers the binary links).
type Blobs struct {
	b *blob.Bucket
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
	if err := s.b.WriteAll(ctx, key, data, nil); err != nil {
		return fmt.Errorf("blob store: write %s: %w", key, err)
	}
	return nil
}

// Get reads key; ok is false when it does not exist.
func (s *Blobs) Get(ctx context.Context, key string) (data []byte, ok bool, err error) {
	data, err = s.b.ReadAll(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("blob store: read %s: %w", key, err)
	}
	return data, true, nil
}

// Delete removes key; a missing key is no error.
func (s *Blobs) Delete(ctx context.Context, key string) error {
	err := s.b.Delete(ctx, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("blob store: delete %s: %w", key, err)
	}
	return nil
}
