package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers/checkpoint"
	"github.com/ballastdev/ballast/workers/checkpoint/checkpointtest"
)

// TestJobCheckpointsListsKeptOnes: three checkpoints saved and committed
// with keep 2 through a real store and ledger leave two, which the
// endpoint lists newest first with what their manifests say; without a
// store the same two are listed by key, each saying why it is unread.
func TestJobCheckpointsListsKeptOnes(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	f := checkpointtest.New(t, store, testenv.S3(t, nil), 2, 200000)
	j, ck := f.Job, f.Store
	for i, token := range []string{"epoch-1", "epoch-2", "epoch-3"} {
		f.Save(t, token, []byte(token+strings.Repeat("x", i*100)))
	}

	get := func(ckStore *checkpoint.Store, id string) (int, api.JobCheckpoints) {
		t.Helper()
		srv := httptest.NewServer(api.Handler(store, nil, "", api.Flows{Checkpoints: ckStore}, api.Insight{}))
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/api/v1/jobs/" + id + "/checkpoints")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body api.JobCheckpoints
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, body
	}

	code, got := get(ck, j.ID)
	if code != http.StatusOK || got.Job != j.ID || len(got.Checkpoints) != 2 {
		t.Fatalf("%d %+v: want two checkpoints", code, got)
	}
	c3, c2 := got.Checkpoints[0], got.Checkpoints[1]
	if c3.Token != "epoch-3" || c2.Token != "epoch-2" || c3.Error != "" || c3.Attempt != 1 || c3.Created.IsZero() || c3.Files != 2 {
		t.Errorf("want epoch-3 then epoch-2, read: %+v", got.Checkpoints)
	}
	if want := int64(200000 + len("epoch-3") + 200); c3.Size != want {
		t.Errorf("size %d, want %d", c3.Size, want)
	}
	// Only the changed file was uploaded again.
	if c3.Uploaded != int64(len("epoch-3")+200) || c2.Uploaded != int64(len("epoch-2")+100) {
		t.Errorf("uploaded %d and %d bytes, want the changed file only", c3.Uploaded, c2.Uploaded)
	}
	if !strings.HasPrefix(c3.Manifest, "jobs/"+j.ID+"/manifests/") {
		t.Errorf("manifest %q", c3.Manifest)
	}

	code, got = get(nil, j.ID)
	if code != http.StatusOK || len(got.Checkpoints) != 2 || got.Checkpoints[0].Token != "" ||
		!strings.Contains(got.Checkpoints[0].Error, "checkpoints.store") || got.Checkpoints[0].Manifest != c3.Manifest {
		t.Errorf("without a store: %d %+v", code, got)
	}
	if code, _ := get(ck, "no-such-job"); code != http.StatusNotFound {
		t.Errorf("unknown job: %d, want 404", code)
	}
}
