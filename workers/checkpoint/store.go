package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/ballastdev/ballast/workers/checkpoint/storespec"
)

// Store is a bucket (under an optional prefix) holding the checkpoints of
// many jobs. Every object of a job lives under jobs/<job id>/, so one job's
// retention lists and deletes only its own objects:
//
//	jobs/<id>/chunks/<sha256 of the content>-<nonce of the save>
//	jobs/<id>/manifests/<attempt>-<seq>-<nonce>.json
//
// Chunks are content-addressed within the job, not across jobs: sharing
// chunks between jobs would save little (jobs rarely hold each other's
// bytes) and would make every collection a scan of every manifest of the
// install. A chunk's name is its sha256 (which Restore checks) followed by
// the nonce of the save that wrote it: a save reuses the chunks of the
// checkpoint it builds on by name, and writes any other content under a
// name no object ever had. So no write ever lands on a key a collection
// may have listed as old garbage and is about to delete (see Collect).
type Store struct {
	b *blob.Bucket
}

// Open opens the store a URL names:
//
//	s3://bucket/prefix?region=eu-west-1
//	s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1
//	gs://bucket/prefix
//	azblob://container/prefix
//	file:///var/lib/ballast/checkpoints
//
// The URL's path (after the bucket) is a key prefix; the other query
// parameters are the driver's (region, endpoint, profile, ...). An s3 URL
// with an endpoint and no use_path_style asks for path-style requests, which
// S3-compatible servers expect; a file URL writes its temporary files
// beside the objects (no_tmp_dir) unless it says otherwise. Credentials come from each SDK's default
// chain on the machine that opens the store.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	u, prefix, err := storespec.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	b, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("checkpoint store %s: %w", storespec.Redact(u), err)
	}
	if prefix != "" {
		b = blob.PrefixedBucket(b, prefix)
	}
	return &Store{b: b}, nil
}

// NewStore wraps a bucket the caller opened (tests, or a caller with its own
// client options).
func NewStore(b *blob.Bucket) *Store { return &Store{b: b} }

// Close releases the bucket.
func (s *Store) Close() error { return s.b.Close() }

// Bucket is the underlying bucket, for tools that inspect the store.
func (s *Store) Bucket() *blob.Bucket { return s.b }

// notFound reports whether err says the object does not exist.
func notFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }

// ErrNoJob is returned for a job ID that cannot name a key prefix.
var ErrNoJob = errors.New("checkpoint: job ID must be non-empty and hold no '/' or '..'")

func jobPrefix(jobID string) (string, error) {
	if jobID == "" || strings.Contains(jobID, "/") || strings.Contains(jobID, "..") {
		return "", ErrNoJob
	}
	return "jobs/" + jobID + "/", nil
}

// chunkKey is where the chunk called name (see chunkName) lives.
func chunkKey(jobID, name string) string { return "jobs/" + jobID + "/chunks/" + name }

// chunkName names a chunk of content sum written by the save whose nonce
// is tag.
func chunkName(sum, tag string) string { return sum + "-" + tag }

// chunkSum is the sha256 a chunk name holds (names are checked by
// isChunkName before use).
func chunkSum(name string) string { return name[:64] }

// manifestKey names a manifest by attempt and sequence, so that a listing
// sorts them in commit order, plus a nonce: two savers that somehow share
// an attempt and a sequence still never overwrite each other's manifest.
func manifestKey(jobID string, attempt int, seq int64, nonce string) string {
	return fmt.Sprintf("jobs/%s/manifests/%010d-%012d-%s.json", jobID, attempt, seq, nonce)
}
