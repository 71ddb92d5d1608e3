package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// stalledBucket is a store that accepts a write and never finishes it,
// as an overloaded or unreachable one does.
type stalledBucket struct{ driver.Bucket }

type stalledWriter struct{ ctx context.Context }

func (w stalledWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w stalledWriter) Close() error                { <-w.ctx.Done(); return w.ctx.Err() }

func (stalledBucket) NewTypedWriter(ctx context.Context, _, _ string, _ *driver.WriterOptions) (driver.Writer, error) {
	return stalledWriter{ctx}, nil
}
func (stalledBucket) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Unknown }
func (stalledBucket) Close() error                           { return nil }

// A store that stops answering fails the operation after its time limit,
// in a line that names the operation and the key, while the caller's
// context (the activity's) is still alive.
func TestASlowStoreFailsTheOperationByName(t *testing.T) {
	s := &Blobs{b: blob.NewBucket(stalledBucket{}), OpTimeout: 200 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := s.Put(ctx, "runs/w/t/manifest.json", []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "blob store: write runs/w/t/manifest.json took longer than 200ms") {
		t.Fatalf("Put on a stalled store: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the caller's context ended")
	}
}
