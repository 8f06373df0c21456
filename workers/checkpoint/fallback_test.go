package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCorruptOrMissingChunkFallsBack: when the newest commit cannot be
// rebuilt whole, the one before it is restored and the fallback reported;
// when none can, the directory is left as it was.
func TestCorruptOrMissingChunkFallsBack(t *testing.T) {
	for _, damage := range []string{"corrupt", "missing"} {
		t.Run(damage, func(t *testing.T) {
			backends(t, func(t *testing.T, st *Store) {
				ctx := context.Background()
				qs, j := runningJob(t)
				ledger := qs.Ledger("wA")
				dir := filepath.Join(t.TempDir(), j.ID)
				saver, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, Options{ChunkSize: 32 << 10})
				writeFile(t, dir, "a", randBytes(10, 100<<10), 0o600)
				writeFile(t, dir, "b", []byte("one"), 0o600)
				first, err := saver.Save(ctx, dir, "one")
				if err != nil {
					t.Fatal(err)
				}
				want := tree(t, dir)
				writeFile(t, dir, "b", []byte("two"), 0o600)
				second, err := saver.Save(ctx, dir, "two")
				if err != nil {
					t.Fatal(err)
				}
				var bad string
				for _, e := range second.Manifest.Entries {
					if e.Path == "b" {
						bad = chunkKey(j.ID, e.Chunks[0])
					}
				}
				if damage == "corrupt" {
					err = st.b.WriteAll(ctx, bad, []byte("owt"), nil)
				} else {
					err = st.b.Delete(ctx, bad)
				}
				if err != nil {
					t.Fatal(err)
				}

				target := filepath.Join(t.TempDir(), j.ID)
				var told []Fallback
				r, err := RestoreLatest(ctx, st, ledger, j.ID, target, RestoreOptions{OnFallback: func(f Fallback) { told = append(told, f) }})
				if err != nil {
					t.Fatal(err)
				}
				if r.Key != first.Key || r.Manifest.Token != "one" {
					t.Fatalf("restored %s (%q), want the first checkpoint %s", r.Key, r.Manifest.Token, first.Key)
				}
				if len(r.Fallbacks) != 1 || r.Fallbacks[0].Key != second.Key || len(told) != 1 || told[0].Key != second.Key {
					t.Fatalf("fallbacks %v, told %v; want one, over %s", r.Fallbacks, told, second.Key)
				}
				sameTree(t, tree(t, target), want)

				// Both damaged: nothing restorable, the directory stays.
				for _, e := range first.Manifest.Entries {
					if e.Path == "a" {
						if err := st.b.Delete(ctx, chunkKey(j.ID, e.Chunks[1])); err != nil {
							t.Fatal(err)
						}
					}
				}
				// (A fresh directory: the one above holds the files, and a
				// restore would rightly take them from it.)
				target = filepath.Join(t.TempDir(), j.ID)
				writeFile(t, target, "mine", []byte("keep me"), 0o600)
				before := tree(t, target)
				r, err = RestoreLatest(ctx, st, ledger, j.ID, target, RestoreOptions{})
				if !errors.Is(err, ErrNoCheckpoint) || r.Manifest != nil || len(r.Fallbacks) != 2 {
					t.Fatalf("nothing restorable: %+v %v, want ErrNoCheckpoint after 2 fallbacks", r, err)
				}
				sameTree(t, tree(t, target), before)
				left, _ := filepath.Glob(filepath.Join(filepath.Dir(target), ".*"))
				if len(left) != 0 {
					t.Fatalf("staging left behind: %v", left)
				}
			})
		})
	}
}

// TestManifestCannotEscape: a manifest naming a path outside the directory
// is refused, whoever wrote it.
func TestManifestCannotEscape(t *testing.T) {
	for _, p := range []string{"../x", "/etc/x", "a/../../x", ""} {
		m := Manifest{Version: manifestVersion, JobID: "j", ChunkSize: 1, Entries: []Entry{{Path: p, Kind: KindDir}}}
		if err := m.check("j"); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	m := Manifest{Version: manifestVersion, JobID: "j", ChunkSize: 4, Entries: []Entry{{Path: "f", Kind: KindFile, Size: 9,
		SHA256: "00", Chunks: []string{"x"}}}}
	if err := m.check("j"); err == nil {
		t.Error("a file whose chunks cannot make its size accepted")
	}
	if _, err := os.Stat("/"); err != nil {
		t.Fatal(err)
	}
}
