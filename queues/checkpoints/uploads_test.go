package checkpoints_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/queues/checkpoints"
)

// TestUploadsKeepTheNewest: upload times come back newest first, at most
// UploadsKept of them, and a value that is not a duration is skipped.
func TestUploadsKeepTheNewest(t *testing.T) {
	t.Parallel()
	k, s := newStore(t)
	ctx := context.Background()
	if got, err := s.Uploads(ctx); err != nil || len(got) != 0 {
		t.Fatalf("no uploads yet: %v %v", got, err)
	}
	for i := 1; i <= checkpoints.UploadsKept+5; i++ {
		if err := s.RecordUpload(ctx, time.Duration(i)*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Uploads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != checkpoints.UploadsKept || got[0] != time.Duration(checkpoints.UploadsKept+5)*time.Millisecond ||
		got[len(got)-1] != 6*time.Millisecond {
		t.Fatalf("%d uploads, first %v, last %v; want %d from 1.005s down to 6ms", len(got), got[0], got[len(got)-1], checkpoints.UploadsKept)
	}
	key := s.AllKeys()[1]
	if err := k.Redis().LPush(ctx, key, "junk", "-3").Err(); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Uploads(ctx)
	if !slices.Equal(got[:1], []time.Duration{time.Duration(checkpoints.UploadsKept+5) * time.Millisecond}) {
		t.Fatalf("values written by hand not skipped: first %v", got[0])
	}
}
