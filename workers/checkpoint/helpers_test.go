package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
)

// clock is the time of the S3 server's objects and of the code under test:
// real time plus an offset a test may advance.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// s3Server starts an S3-compatible server in this process, in memory, on a
// loopback listener, and returns the store URL of a bucket on it. Objects
// are stamped with clk's time.
func s3Server(t testing.TB, clk *clock) string {
	u, _ := s3ServerCounting(t, clk)
	return u
}

// puts counts the object writes an S3 server received.
type puts struct{ n atomic.Int64 }

// s3ServerCounting is s3Server, and counts the PUT requests it serves.
func s3ServerCounting(t testing.TB, clk *clock) (string, *puts) {
	t.Helper()
	var opts []s3mem.Option
	if clk != nil {
		opts = append(opts, s3mem.WithTimeSource(clk))
	}
	backend := s3mem.New(opts...)
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()), gofakes3.WithTimeSkewLimit(0))
	p := &puts{}
	h := faker.Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			p.n.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	// The fake server logs a header written twice on some errors; that
	// is its noise, not the test's.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	t.Cleanup(srv.Close)
	if err := backend.CreateBucket("ckpt"); err != nil {
		t.Fatal(err)
	}
	// anonymous: the fake server checks no signature, and the SDK's
	// default chain would look for credentials this machine may not have.
	return "s3://ckpt/ballast/checkpoints?region=us-east-1&anonymous=true&endpoint=" + url.QueryEscape(srv.URL), p
}

func openStore(t testing.TB, rawURL string) *Store {
	t.Helper()
	st, err := Open(context.Background(), rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// backends runs f against an S3-compatible server and a file:// store.
func backends(t *testing.T, f func(t *testing.T, st *Store)) {
	t.Run("s3", func(t *testing.T) { f(t, openStore(t, s3Server(t, nil))) })
	t.Run("file", func(t *testing.T) { f(t, openStore(t, "file://"+t.TempDir())) })
}

// ledgerStore names the embedded checkpoint store apart from the kernel's.
type ledgerStore = checkpoints.Store

// jobStore is the kernel's store and the checkpoint ledger on it: the
// tests move a job through the kernel and commit through the ledger, as
// the worker does.
type jobStore struct {
	*queues.Store
	*ledgerStore
}

// runningJob submits a job to a real Redis (a namespace of its own) and
// claims its first attempt on worker "wA".
func runningJob(t testing.TB) (*jobStore, jobs.Job) {
	t.Helper()
	qs, j, _ := runningJobIn(t)
	return qs, j
}

// runningJobIn is runningJob, and also returns the Redis namespace.
func runningJobIn(t testing.TB) (*jobStore, jobs.Job, string) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	k := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	qs := &jobStore{k, checkpoints.New(k)}
	ctx := context.Background()
	sub, err := qs.Submit(ctx, jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassCore,
		Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)}, queues.QueueLoan)
	if err != nil {
		t.Fatal(err)
	}
	j, ok, err := qs.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "wA")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	return qs, j, ns
}

// moveOn requeues j's attempt and claims the next on worker "wB", as a
// reclaim would.
func moveOn(t testing.TB, qs *jobStore, j jobs.Job) jobs.Job {
	t.Helper()
	return moveTo(t, qs, j, "wA", "wB")
}

// moveTo requeues j's attempt, run by worker from, and claims the next on
// worker to.
func moveTo(t testing.TB, qs *jobStore, j jobs.Job, from, to string) jobs.Job {
	t.Helper()
	ctx := context.Background()
	r, err := qs.Requeue(ctx, j, from, queues.Requeue{Queue: queues.QueueBurst, Reason: "reclaimed"})
	if err != nil {
		t.Fatal(err)
	}
	next, ok, err := qs.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: r.Attempt}, to)
	if err != nil || !ok {
		t.Fatalf("claim attempt %d: %v %v", r.Attempt, ok, err)
	}
	return next
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func writeFile(t testing.TB, dir, rel string, data []byte, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// tree describes a directory: the sha256 and mode of each file, and each
// directory and link, by slash path.
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			out[rel] = "dir " + info.Mode().Perm().String()
		case info.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link " + l
		default:
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			h := sha256.New()
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
			out[rel] = hex.EncodeToString(h.Sum(nil)) + " " + info.Mode().Perm().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t testing.TB, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: present, not wanted", k)
		}
	}
}

// objects lists the store's keys under prefix.
func objects(t testing.TB, st *Store, prefix string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for k := range sizes(t, st, prefix) {
		out[k] = true
	}
	return out
}

// sizes lists the store's objects under prefix with their sizes.
func sizes(t testing.TB, st *Store, prefix string) map[string]int64 {
	t.Helper()
	listed, err := st.list(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, o := range listed {
		out[o.Key] = o.Size
	}
	return out
}

func count(set map[string]bool, sub string) int {
	n := 0
	for k := range set {
		if strings.Contains(k, sub) {
			n++
		}
	}
	return n
}
