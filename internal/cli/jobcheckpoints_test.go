package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers/checkpoint/checkpointtest"
)

// TestJobsShowListsKeptCheckpoints: three checkpoints committed with keep
// 2 leave two, which `jobs show` lists newest first with their size and
// what their upload wrote, in the table and in JSON.
func TestJobsShowListsKeptCheckpoints(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	srv := testenv.NATS(t)
	storeURL := testenv.S3(t, nil)
	path := filepath.Join(t.TempDir(), "ballast.yaml")
	yaml := fmt.Sprintf(`namespace: %s
redis: {addr: %s}
nats: {url: %s}
pools:
  fixed: {kind: fixed, slots: 1}
checkpoints:
  store: %q
  keep: 2
`, ns, testenv.RedisAddr(), srv.ClientURL(), storeURL)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	f := checkpointtest.New(t, store, storeURL, 2, 300000)
	j := f.Job
	for i, token := range []string{"epoch-1", "epoch-2", "epoch-3"} {
		f.Save(t, token, []byte(token+strings.Repeat("x", i*1000)))
	}

	out := runOK(t, "jobs", "show", "--config", path, j.ID)
	if _, ok := lineWith(out, "checkpoints kept in the store"); !ok {
		t.Fatalf("no checkpoint table:\n%s", out)
	}
	newest, ok1 := lineWith(out, "1 ", "epoch-3", "2 files", "jobs/"+j.ID+"/manifests/")
	older, ok2 := lineWith(out, "2 ", "epoch-2", "2 files")
	if !ok1 || !ok2 || strings.Contains(out, "epoch-1") {
		t.Fatalf("want epoch-3 then epoch-2 and no epoch-1:\n%s", out)
	}
	t.Logf("\n%s\n%s", newest, older)

	js := runOK(t, "jobs", "show", "--config", path, "-o", "json", j.ID)
	var got struct {
		Checkpoints []keptCheckpoint `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	if len(got.Checkpoints) != 2 {
		t.Fatalf("%d checkpoints in JSON, want 2: %+v", len(got.Checkpoints), got.Checkpoints)
	}
	c3, c2 := got.Checkpoints[0], got.Checkpoints[1]
	if c3.Token != "epoch-3" || c3.Size != 300000+int64(len("epoch-3"))+2000 || c3.Attempt != 1 || c3.Created.IsZero() {
		t.Errorf("newest %+v", c3)
	}
	// The second and third uploads wrote only the small changed file.
	if c2.Token != "epoch-2" || c2.Uploaded != int64(len("epoch-2"))+1000 || c3.Uploaded != int64(len("epoch-3"))+2000 {
		t.Errorf("uploaded %d and %d bytes, want only the changed file each time", c2.Uploaded, c3.Uploaded)
	}
}
