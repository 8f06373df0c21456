package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shape is a checkpoint directory: bigs files of big bytes (a model's
// shards) and smalls small ones, saved in chunks of chunk bytes.
type shape struct {
	bigs   int
	big    int64
	smalls int
	chunk  int64
}

// The checkpoint is eight 128 MiB files and 100 small ones; the
// small shape keeps its form at 16 MiB, so that it runs in every test run.
var (
	gibShape   = shape{bigs: 8, big: 128 << 20, smalls: 100, chunk: DefaultChunkSize}
	smallShape = shape{bigs: 8, big: 2 << 20, smalls: 100, chunk: 256 << 10}
)

func (sh shape) fill(t testing.TB, dir string, seed uint64) {
	t.Helper()
	for i := range sh.bigs {
		writeFile(t, dir, fmt.Sprintf("shard-%d.bin", i), randBytes(seed+uint64(i), int(sh.big)), 0o600)
	}
	for i := range sh.smalls {
		writeFile(t, dir, fmt.Sprintf("meta/%02d/small-%03d.json", i%10, i), randBytes(seed+1000+uint64(i), 100+37*i), 0o644)
	}
}

// TestTravel: attempt 1 saves a directory on worker A; attempt 2 on worker
// B restores it into an empty directory, byte for byte (sha256 per file);
// B changes one big file, and its checkpoint writes that file's chunks and
// the manifest, nothing else; attempt 3, back on A, downloads only that
// file.
func TestTravel(t *testing.T) {
	travel(t, smallShape)
}

// TestTravelGiB is TestTravel at the size, with its figures: set
// BALLAST_CKPT_GIB=1 and run with -v.
func TestTravelGiB(t *testing.T) {
	if os.Getenv("BALLAST_CKPT_GIB") == "" {
		t.Skip("set BALLAST_CKPT_GIB=1 to move a 1 GiB checkpoint")
	}
	travel(t, gibShape)
}

func travel(t *testing.T, sh shape) {
	t.Run("s3", func(t *testing.T) {
		u, p := s3ServerCounting(t, nil)
		travelOn(t, sh, openStore(t, u), p)
	})
	t.Run("file", func(t *testing.T) { travelOn(t, sh, openStore(t, "file://"+t.TempDir()), nil) })
}

// travelOn runs the travel on st; p, when not nil, counts st's PUTs.
func travelOn(t *testing.T, sh shape, st *Store, p *puts) {
	ctx := context.Background()
	qs, j := runningJob(t)
	opts := Options{ChunkSize: sh.chunk}
	dirA := filepath.Join(t.TempDir(), "A", j.ID)
	sh.fill(t, dirA, 1)
	want := tree(t, dirA)
	total := int64(sh.bigs)*sh.big + int64(sh.smalls)*100 + 37*int64(sh.smalls*(sh.smalls-1)/2)

	saverA, err := NewSaver(st, qs.Ledger("wA"), j.ID, j.Attempt, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := saverA.Save(ctx, dirA, "step=1")
	if err != nil {
		t.Fatal(err)
	}
	m := saved.Manifest
	if m.Size != total || m.Uploaded != total {
		t.Fatalf("first checkpoint: %d bytes, %d uploaded; want %d and %d", m.Size, m.Uploaded, total, total)
	}
	t.Logf("upload of %d files, %.1f MiB: %v (%.0f MiB/s), chunks %d",
		sh.bigs+sh.smalls, mib(m.Size), saved.Duration.Round(time.Millisecond), mib(m.Size)/saved.Duration.Seconds(), m.UploadedChunks)

	// Attempt 2 on worker B, whose directory does not exist yet.
	j2 := moveOn(t, qs, j)
	dirB := filepath.Join(t.TempDir(), "B", j.ID)
	r, err := RestoreLatest(ctx, st, qs.Ledger("wB"), j.ID, dirB, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Key != saved.Key || r.Manifest.Token != "step=1" || r.Downloaded != total || r.ReusedFiles != 0 {
		t.Fatalf("restore on B: %s %q, %d bytes downloaded, %d files reused; want %s, step=1, %d, 0",
			r.Key, r.Manifest.Token, r.Downloaded, r.ReusedFiles, saved.Key, total)
	}
	sameTree(t, tree(t, dirB), want)
	t.Logf("restore into an empty directory: %v (%.0f MiB/s), %d chunks", r.Duration.Round(time.Millisecond),
		mib(r.Downloaded)/r.Duration.Seconds(), r.DownloadedChunks)

	// B changes one big file: the next checkpoint writes its chunks and
	// a manifest, as objects in the store and as PUT requests.
	writeFile(t, dirB, "shard-3.bin", randBytes(99, int(sh.big)), 0o600)
	want2 := tree(t, dirB)
	before := sizes(t, st, "jobs/"+j.ID+"/")
	var putsBefore int64
	if p != nil {
		putsBefore = p.n.Load()
	}
	saverB, err := NewSaver(st, qs.Ledger("wB"), j.ID, j2.Attempt, r.Manifest, opts)
	if err != nil {
		t.Fatal(err)
	}
	saved2, err := saverB.Save(ctx, dirB, "step=2")
	if err != nil {
		t.Fatal(err)
	}
	var newChunks, newManifests int
	var newBytes int64
	for k, n := range sizes(t, st, "jobs/"+j.ID+"/") {
		if _, ok := before[k]; ok {
			continue
		}
		if strings.Contains(k, "/manifests/") {
			newManifests++
		} else {
			newChunks++
			newBytes += n
		}
	}
	wantChunks := int((sh.big + sh.chunk - 1) / sh.chunk)
	if newChunks != wantChunks || newBytes != sh.big || newManifests != 1 {
		t.Fatalf("second checkpoint added %d chunks (%d bytes) and %d manifests; want %d chunks (%d bytes) and 1",
			newChunks, newBytes, newManifests, wantChunks, sh.big)
	}
	if m2 := saved2.Manifest; m2.Uploaded != sh.big || m2.UploadedChunks != wantChunks {
		t.Fatalf("second checkpoint says it uploaded %d bytes in %d chunks; want %d in %d", m2.Uploaded, m2.UploadedChunks, sh.big, wantChunks)
	}
	if p != nil {
		if n := p.n.Load() - putsBefore; n != int64(wantChunks+1) {
			t.Fatalf("second checkpoint made %d PUT requests; want %d chunks and a manifest", n, wantChunks)
		}
	}
	t.Logf("second checkpoint, one %.0f MiB file changed: %d chunks + 1 manifest written, %.1f MiB, %v (%d files hashed)",
		mib(sh.big), newChunks, mib(newBytes), saved2.Duration.Round(time.Millisecond), saved2.HashedFiles)

	// Attempt 3 returns to A, whose directory still holds checkpoint 1.
	moveTo(t, qs, j2, "wB", "wA")
	r3, err := RestoreLatest(ctx, st, qs.Ledger("wA"), j.ID, dirA, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r3.Key != saved2.Key || r3.Downloaded != sh.big || r3.ReusedFiles != sh.bigs-1+sh.smalls {
		t.Fatalf("restore on A: %s, %d bytes downloaded, %d files reused; want %s, %d, %d",
			r3.Key, r3.Downloaded, r3.ReusedFiles, saved2.Key, sh.big, sh.bigs-1+sh.smalls)
	}
	sameTree(t, tree(t, dirA), want2)
	t.Logf("restore where all but the changed file are: %v, %.1f MiB downloaded", r3.Duration.Round(time.Millisecond), mib(r3.Downloaded))
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
