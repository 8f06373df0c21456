package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestKeepThreeAfterTen: after ten commits with keep 3 and a collection,
// exactly the three committed manifests remain, every chunk they name is
// there, and no other chunk is.
func TestKeepThreeAfterTen(t *testing.T) {
	backends(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		qs, j := runningJob(t)
		ledger := qs.Ledger("wA")
		dir := filepath.Join(t.TempDir(), j.ID)
		saver, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, Options{ChunkSize: 16 << 10, Keep: 3})
		writeFile(t, dir, "stable", randBytes(7, 40<<10), 0o600)
		for i := range 10 {
			writeFile(t, dir, "step", randBytes(uint64(100+i), 20<<10), 0o600)
			if _, err := saver.Save(ctx, dir, fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
		}
		grace := time.Hour
		// Within the grace nothing goes, garbage included.
		if c, err := Collect(ctx, st, ledger, j.ID, grace, time.Now()); err != nil || c.Manifests+c.Chunks != 0 {
			t.Fatalf("collect within the grace: %+v %v, want nothing deleted", c, err)
		}
		c, err := Collect(ctx, st, ledger, j.ID, grace, time.Now().Add(2*grace))
		if err != nil {
			t.Fatal(err)
		}
		if c.Manifests != 7 || c.Chunks != 7*2 || c.Committed != 3 {
			t.Fatalf("collected %+v, want 7 manifests and 14 chunks, 3 committed", c)
		}
		committed, _ := ledger.Committed(ctx, j.ID)
		left := objects(t, st, "jobs/"+j.ID+"/")
		if count(left, "/manifests/") != 3 {
			t.Fatalf("%d manifests left, want 3", count(left, "/manifests/"))
		}
		named := map[string]bool{}
		for _, k := range committed {
			if !left[k] {
				t.Fatalf("committed manifest %s deleted", k)
			}
			m, err := st.ReadManifest(ctx, j.ID, k)
			if err != nil {
				t.Fatal(err)
			}
			for sum := range m.chunkSet() {
				named[chunkKey(j.ID, sum)] = true
				if !left[chunkKey(j.ID, sum)] {
					t.Fatalf("chunk %s of %s deleted", sum, k)
				}
			}
		}
		if count(left, "/chunks/") != len(named) {
			t.Fatalf("%d chunks left, the manifests name %d", count(left, "/chunks/"), len(named))
		}
		if m, _ := st.ReadManifest(ctx, j.ID, committed[0]); m.Token != "9" {
			t.Fatalf("newest committed token %q, want 9", m.Token)
		}
	})
}

// TestCollectDuringUploadLosesNoChunk: collections run while a checkpoint
// uploads (one of them at the worst moment, chunks written and nothing
// committed), with everything older than the grace on the store's clock.
// The upload relies on chunks of the committed checkpoint and rewrites a
// file back to an older, uncommitted content whose chunks are old garbage;
// it still commits a checkpoint that restores whole, while real garbage is
// deleted.
func TestCollectDuringUploadLosesNoChunk(t *testing.T) {
	clk := &clock{}
	st := openStore(t, s3Server(t, clk))
	ctx := context.Background()
	qs, j := runningJob(t)
	ledger := qs.Ledger("wA")
	dir := filepath.Join(t.TempDir(), j.ID)
	const grace = 10 * time.Minute
	opts := Options{ChunkSize: 4 << 10, Concurrency: 2, Keep: 1, Grace: grace, Now: clk.Now}
	saver, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, opts)
	a1 := randBytes(1, 128<<10)
	writeFile(t, dir, "a", a1, 0o600)
	writeFile(t, dir, "b", randBytes(2, 64<<10), 0o600)
	writeFile(t, dir, "d", randBytes(3, 32<<10), 0o600)
	if _, err := saver.Save(ctx, dir, "1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a", randBytes(4, 128<<10), 0o600)
	writeFile(t, dir, "d", nil, 0o600)
	if _, err := saver.Save(ctx, dir, "2"); err != nil {
		t.Fatal(err)
	}
	// Everything written so far is now older than the grace; the first
	// checkpoint (keep 1) is garbage.
	clk.Advance(grace + time.Minute)
	writeFile(t, dir, "a", a1, 0o600)
	writeFile(t, dir, "c", randBytes(5, 1<<20), 0o600)
	want := tree(t, dir)

	var mu sync.Mutex
	var deleted Collected
	collect := func() error {
		c, err := Collect(ctx, st, ledger, j.ID, grace, clk.Now())
		mu.Lock()
		deleted.Manifests += c.Manifests
		deleted.Chunks += c.Chunks
		mu.Unlock()
		return err
	}
	saver.beforeManifest = func(context.Context) {
		if err := collect(); err != nil {
			t.Error(err)
		}
	}
	stop := make(chan struct{})
	loop := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				loop <- nil
				return
			default:
			}
			if err := collect(); err != nil {
				loop <- err
				return
			}
		}
	}()
	saved, err := saver.Save(ctx, dir, "3")
	close(stop)
	if lerr := <-loop; lerr != nil {
		t.Fatal(lerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := collect(); err != nil {
		t.Fatal(err)
	}
	if deleted.Manifests < 1 || deleted.Chunks < 8 {
		t.Fatalf("collections deleted %+v; want the first manifest and d's 8 chunks at least", deleted)
	}
	left := objects(t, st, "jobs/"+j.ID+"/chunks/")
	for sum := range saved.Manifest.chunkSet() {
		if !left[chunkKey(j.ID, sum)] {
			t.Fatalf("chunk %s of the committed checkpoint was collected", sum)
		}
	}
	target := filepath.Join(t.TempDir(), j.ID)
	r, err := RestoreLatest(ctx, st, ledger, j.ID, target, RestoreOptions{})
	if err != nil || r.Key != saved.Key {
		t.Fatalf("restore: %+v %v", r, err)
	}
	sameTree(t, tree(t, target), want)
}

// TestTooSlowUploadCommitsNothing: a save that outlives MaxUploadAge gives
// up before its commit, since its first chunks may already count as
// garbage.
func TestTooSlowUploadCommitsNothing(t *testing.T) {
	clk := &clock{}
	st := openStore(t, "file://"+t.TempDir())
	ctx := context.Background()
	qs, j := runningJob(t)
	ledger := qs.Ledger("wA")
	dir := filepath.Join(t.TempDir(), j.ID)
	saver, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, Options{Grace: time.Hour, Now: clk.Now})
	writeFile(t, dir, "x", []byte("x"), 0o600)
	saver.beforeManifest = func(context.Context) { clk.Advance(31 * time.Minute) }
	if _, err := saver.Save(ctx, dir, "late"); !errors.Is(err, ErrTooSlow) {
		t.Fatalf("slow save: %v, want ErrTooSlow", err)
	}
	if keys, _ := ledger.Committed(ctx, j.ID); len(keys) != 0 {
		t.Fatalf("committed %v, want nothing", keys)
	}
	saver.beforeManifest = nil
	if _, err := saver.Save(ctx, dir, "on time"); err != nil {
		t.Fatalf("the next save: %v", err)
	}
}

// TestCollectLoopDuringSaves: on real clocks, a collection runs without
// pause while ten checkpoints are saved with keep 3 and a grace of a
// second; the job cycles a file through four contents, so each save
// writes again content whose chunks went out of the kept checkpoints
// more than a grace ago. After every commit, every chunk of every
// committed checkpoint exists and the newest restores whole.
func TestCollectLoopDuringSaves(t *testing.T) {
	backends(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		qs, j := runningJob(t)
		ledger := qs.Ledger("wA")
		dir := filepath.Join(t.TempDir(), j.ID)
		const grace = time.Second
		saver, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, Options{ChunkSize: 8 << 10, Keep: 3, Grace: grace})
		writeFile(t, dir, "stable", randBytes(1, 30<<10), 0o600)

		stop := make(chan struct{})
		loop := make(chan error, 1)
		var runs, deleted int
		go func() {
			for {
				select {
				case <-stop:
					loop <- nil
					return
				default:
				}
				c, err := Collect(ctx, st, ledger, j.ID, grace, time.Now())
				if err != nil {
					loop <- err
					return
				}
				runs++
				deleted += c.Chunks
			}
		}()
		tooSlow := 0
		for i := range 10 {
			time.Sleep(grace / 2)
			writeFile(t, dir, "cycle", randBytes(uint64(100+i%4), 40<<10), 0o600)
			saved, err := saver.Save(ctx, dir, fmt.Sprint(i))
			// A loaded machine may take longer than half a second;
			// the next save must work.
			for try := 0; errors.Is(err, ErrTooSlow) && try < 3; try++ {
				tooSlow++
				saved, err = saver.Save(ctx, dir, fmt.Sprint(i))
			}
			if err != nil {
				t.Fatal(err)
			}
			left := objects(t, st, "jobs/"+j.ID+"/chunks/")
			committed, _ := ledger.Committed(ctx, j.ID)
			for _, k := range committed {
				m, err := st.ReadManifest(ctx, j.ID, k)
				if err != nil {
					t.Fatalf("save %d: committed %s: %v", i, k, err)
				}
				for name := range m.chunkSet() {
					if !left[chunkKey(j.ID, name)] {
						t.Fatalf("save %d: chunk %s of committed %s (token %s) was collected", i, name, k, m.Token)
					}
				}
			}
			r, err := RestoreLatest(ctx, st, ledger, j.ID, filepath.Join(t.TempDir(), j.ID), RestoreOptions{})
			if err != nil || r.Key != saved.Key || len(r.Fallbacks) != 0 {
				t.Fatalf("save %d: restore %+v %v, want %s", i, r, err, saved.Key)
			}
		}
		close(stop)
		if err := <-loop; err != nil {
			t.Fatal(err)
		}
		if deleted == 0 {
			t.Fatalf("%d collections deleted no chunk; the test did not exercise them", runs)
		}
		t.Logf("%d collections deleted %d chunks during 10 saves (%d too slow, saved again)", runs, deleted, tooSlow)
	})
}
