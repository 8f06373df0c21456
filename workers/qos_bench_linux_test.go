//go:build linux

package workers_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers/isolation"
)

// Sizes of the QoS benchmark: a training dataset streamed in 1 MiB reads,
// and a file per burst job that it reads over and over.
const (
	benchTrainSize = 512 << 20
	benchBurstSize = 16 << 20
	benchBurstJobs = 8
	// benchBurstRead is the burst group's read limit with isolation on: the
	// whole group's, on this worker.
	benchBurstRead = 64 << 20
)

// BenchmarkQoSTrainingRead measures what isolation buys a training job on
// a fixed worker: it streams its dataset while 8 small IO-heavy burst jobs,
// lent to the same worker, read their own files as fast as they can. Every
// read is direct IO (dd iflag=direct), so the page cache serves none of
// them and the figures are the disk's. It reports the training job's read
// throughput alone, with isolation off, and with the burst group limited to
// 64 MiB/s of reads (cgroup v1 blkio), and the share of the alone figure
// kept. Run it with:
//
//	go test -run '^$' -bench QoSTrainingRead -benchtime 1x ./workers/
func BenchmarkQoSTrainingRead(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root to create cgroups")
	}
	for _, c := range []string{"blkio", "cpu", "memory"} {
		if _, err := os.Stat(filepath.Join(cgroupRoot, c, "cgroup.procs")); err != nil {
			b.Skipf("needs the cgroup v1 %s hierarchy: %v", c, err)
		}
	}
	data := b.TempDir()
	writeData(b, filepath.Join(data, "train"), benchTrainSize)
	for i := range benchBurstJobs {
		writeData(b, filepath.Join(data, "s"+strconv.Itoa(i)), benchBurstSize)
	}
	on := jobs.QoS{Groups: map[string]jobs.Limits{
		"burst": {IO: []jobs.IOLimit{{Path: data, ReadBPS: benchBurstRead}}},
	}}
	for range b.N {
		// The disk is shared with whatever else runs on the machine, and
		// its speed drifts: alone and isolated runs alternate, five each,
		// and each figure is a median.
		var alones, withs []float64
		for range 5 {
			alones = append(alones, trainingRead(b, data, 0, isolation.Off, jobs.QoS{}))
			withs = append(withs, trainingRead(b, data, benchBurstJobs, isolation.V1, on))
		}
		off := trainingRead(b, data, benchBurstJobs, isolation.Off, jobs.QoS{})
		alone, with := median(b, "alone", alones), median(b, "isolation on", withs)
		fmt.Printf("training read throughput (direct IO, 1 MiB reads of %d MiB):\n", benchTrainSize>>20)
		fmt.Printf("  alone:                             %7.1f MiB/s\n", alone/(1<<20))
		fmt.Printf("  with %d burst jobs, isolation off:  %7.1f MiB/s (%.0f%% of alone)\n", benchBurstJobs, off/(1<<20), 100*off/alone)
		fmt.Printf("  with %d burst jobs, isolation on:   %7.1f MiB/s (%.0f%% of alone; burst group reads limited to %d MiB/s)\n",
			benchBurstJobs, with/(1<<20), 100*with/alone, benchBurstRead>>20)
		b.ReportMetric(alone/(1<<20), "alone-MiB/s")
		b.ReportMetric(off/(1<<20), "off-MiB/s")
		b.ReportMetric(with/(1<<20), "on-MiB/s")
		b.ReportMetric(100*with/alone, "on-%-of-alone")
	}
}

func median(b *testing.B, what string, vs []float64) float64 {
	vs = slices.Sorted(slices.Values(vs))
	mib := make([]string, len(vs))
	for i, v := range vs {
		mib[i] = strconv.FormatFloat(v/(1<<20), 'f', 0, 64)
	}
	b.Logf("%s runs (MiB/s, sorted): %v", what, mib)
	return vs[len(vs)/2]
}

// trainingRead runs one scenario on a fresh fixed worker and returns the
// training job's read throughput in bytes/s, as dd measured it.
func trainingRead(b *testing.B, data string, burst int, mode isolation.Mode, qos jobs.QoS) float64 {
	b.Helper()
	e := newEnv(b)
	o := e.options()
	o.Slots = burst + 1
	o.ID = "qosbench-" + e.ns
	o.QoS, o.Isolation = qos, mode
	o.Logger = quietLogger()
	w := e.start(o)
	defer w.Stop()
	var running []string
	for i := range burst {
		spec := e.shell(`while [ ! -e "$BALLAST_PARAM_DIR/stop" ]; do dd if="$BALLAST_PARAM_DATA/s` + strconv.Itoa(i) +
			`" of=/dev/null bs=1M iflag=direct status=none || exit 1; done`)
		spec.Params["data"] = data
		spec.Class, spec.Rhythm = jobs.ClassBurst, jobs.RhythmPulse
		running = append(running, e.submit(spec, queues.QueueLoan).ID)
	}
	for _, id := range running {
		e.waitFor(id, 10*time.Second, "burst job running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
	}
	if burst > 0 {
		time.Sleep(300 * time.Millisecond) // let the burst reads reach full speed
	}
	spec := e.shell(`dd if="$BALLAST_PARAM_DATA/train" of=/dev/null bs=1M iflag=direct 2>&1`)
	spec.Params["data"] = data
	j := e.submit(spec, queues.QueueCore)
	got := e.waitTerminal(j.ID, 2*time.Minute)
	e.touch("stop")
	if got.State != jobs.StateSucceeded {
		b.Fatalf("training job %s: %s", got.State, got.LastError)
	}
	for _, l := range e.logs(j.ID) {
		if m := ddSeconds.FindStringSubmatch(l.Text); m != nil {
			n, _ := strconv.ParseFloat(m[1], 64)
			s, _ := strconv.ParseFloat(m[2], 64)
			return n / s
		}
	}
	b.Fatalf("no dd summary in the training job's output: %+v", e.logs(j.ID))
	return 0
}

func writeData(b *testing.B, path string, n int) {
	b.Helper()
	writeFile(b, path, n)
}

// quietLogger drops the worker's log: a benchmark prints figures only.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
