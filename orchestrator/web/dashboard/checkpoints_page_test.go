package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/internal/tools/browser"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers/checkpoint"
	"github.com/ballastdev/ballast/workers/checkpoint/checkpointtest"
)

// TestPageShowsKeptCheckpoints opens a job's page served by the real API
// over Redis and a checkpoint store holding two committed checkpoints: the
// page lists both, newest first, with the size, bytes uploaded and upload
// time their manifests record.
func TestPageShowsKeptCheckpoints(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	f := checkpointtest.New(t, store, testenv.S3(t, nil), 2, 3<<20)
	j, ck := f.Job, f.Store
	var saved []*checkpoint.Saved
	for _, token := range []string{"epoch-1", "epoch-2"} {
		saved = append(saved, f.Save(t, token, []byte(token)))
	}

	// The page reads the record every few seconds, the checkpoints (a
	// store read per manifest) only when the record's checkpoint moved.
	var recordReads, ckReads atomic.Int64
	apiH := api.Handler(store, nil, "", api.Flows{Checkpoints: ck}, api.Insight{})
	mux := http.NewServeMux()
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/jobs/" + j.ID:
			recordReads.Add(1)
		case "/api/v1/jobs/" + j.ID + "/checkpoints":
			ckReads.Add(1)
		}
		apiH.ServeHTTP(w, r)
	}))
	mux.Handle("/dashboard", Handler())
	mux.Handle("/dashboard/", Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := startBrowser(t)
	if status, err := b.Open(srv.URL+"/dashboard#job="+j.ID, 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("opening the page: %d %v", status, err)
	}
	if err := b.WaitFor(`document.getElementById('job-checkpoints').dataset.count === '2'`, 10*time.Second); err != nil {
		t.Fatalf("the page did not list two checkpoints: %v", err)
	}
	vals, err := b.Values(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The newest first: epoch-2 wrote only its small file, epoch-1 all.
	for i, s := range []*checkpoint.Saved{saved[1], saved[0]} {
		k := "checkpoint." + strconv.Itoa(i+1) + "."
		m := s.Manifest
		want := map[string]string{k + "token": m.Token, k + "attempt": "1", k + "size": strconv.FormatInt(m.Size, 10),
			k + "files": "2", k + "uploaded": strconv.FormatInt(m.Uploaded, 10),
			k + "upload_seconds": strconv.FormatFloat(float64(m.UploadMillis)/1000, 'f', -1, 64), k + "manifest": s.Key}
		for name, v := range want {
			if vals[name] != v {
				t.Errorf("%s = %q, want %q", name, vals[name], v)
			}
		}
		if vals[k+"created"] == "" {
			t.Errorf("%s has no time", k+"created")
		}
	}
	if vals["checkpoint.1.uploaded"] == vals["checkpoint.2.uploaded"] {
		t.Errorf("both uploads wrote %s bytes: the second should write only what changed", vals["checkpoint.1.uploaded"])
	}
	// What a reader sees: sizes in binary units, as jobs show prints them.
	row, err := browser.Eval[string](b, `document.querySelector('#job-checkpoints tr').textContent`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(row, "3.0 MiB") || !strings.Contains(row, "7 B") || !strings.Contains(row, "epoch-2") ||
		!strings.Contains(row, strconv.FormatInt(saved[1].Manifest.UploadMillis, 10)+" ms") {
		t.Errorf("newest row reads %q: want its size, upload, token and upload time", row)
	}
	t.Logf("newest row: %s", row)

	// Two more record reads, and the checkpoints were not read again.
	seen := recordReads.Load()
	testenv.Eventually(t, 15*time.Second, "two more reads of the record", func() bool { return recordReads.Load() >= seen+2 })
	if n := ckReads.Load(); n != 1 {
		t.Errorf("the checkpoints were read %d times with no new commit, want once", n)
	}
	// A new commit shows on the next refresh.
	f.Save(t, "epoch-3", []byte("epoch-3"))
	if err := b.WaitFor(`(document.querySelector('[data-k="checkpoint.1.token"]') || {}).textContent === 'epoch-3'`, 15*time.Second); err != nil {
		t.Fatalf("the new checkpoint was not shown: %v", err)
	}
	if n := ckReads.Load(); n != 2 {
		t.Errorf("the checkpoints were read %d times after one new commit, want twice", n)
	}
}
