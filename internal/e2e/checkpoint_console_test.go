package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// TestControllerServesKeptCheckpoints: a `ballast controller` whose config
// names a checkpoint store opens it and serves, for the console's job
// page, each checkpoint a job keeps with what its manifest records.
func TestControllerServesKeptCheckpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	storeURL := testenv.S3(t, nil)
	r := newHybridRigWith(t, hybrid2Pools(1, 1, 1), 0.7, 0.4, func(c *config.Config) {
		c.Checkpoints = config.CheckpointsConfig{Store: storeURL}
	})
	ctl := r.startBallast("ctl", "controller", "--config", r.cfgPath, "--provider", "none")
	addr := apiAddress(t, ctl)

	ctx := context.Background()
	sub, err := r.store.Submit(ctx, jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w1"); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	st, err := checkpoint.Open(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	saver, err := checkpoint.NewSaver(st, checkpoints.New(r.store).Ledger("w1"), sub.Job.ID, 1, nil, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "model.bin"), make([]byte, 500000), 0o600); err != nil {
		t.Fatal(err)
	}
	saved, err := saver.Save(ctx, dir, "step-1")
	if err != nil {
		t.Fatal(err)
	}

	res, err := http.Get(addr + "/api/v1/jobs/" + sub.Job.ID + "/checkpoints")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got api.JobCheckpoints
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET checkpoints: %d %v\n%s", res.StatusCode, err, ctl.log())
	}
	if len(got.Checkpoints) != 1 {
		t.Fatalf("%d checkpoints, want 1: %+v", len(got.Checkpoints), got)
	}
	c := got.Checkpoints[0]
	if c.Error != "" || c.Token != "step-1" || c.Manifest != saved.Key || c.Size != 500000 || c.Uploaded != 500000 ||
		c.UploadMillis != saved.Manifest.UploadMillis {
		t.Errorf("served %+v; want step-1 of 500000 bytes, all uploaded, in %d ms", c, saved.Manifest.UploadMillis)
	}
}
