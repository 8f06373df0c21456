package workers

import (
	"fmt"
	"strings"

	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers/gpu"
)

// On a GPU worker (Options.GPUs) a slot is a GPU: each attempt is granted
// devices of its own when it starts and gives them back when it ends,
// however it ends, and its process sees only those (deviceEnv).

// grantDevices gives the attempt key (its task ID) n GPUs no other attempt
// holds, lowest indices first, or for a job of share thousandths of a GPU
// a share of one (see slotBook.grant). False means fewer than n are free. A worker without GPUs
// grants nothing and says true: there is nothing to bind.
func (w *Worker) grantDevices(key string, n, share int) ([]gpu.Device, bool) {
	if !w.gpuWorker() {
		return nil, true
	}
	return w.slots.grant(key, n, share)
}

// gpuWorker reports whether the worker has GPUs to bind jobs to.
func (w *Worker) gpuWorker() bool { return w.slots.gpus != nil }

// releaseDevices gives back what grantDevices granted to key; releasing
// twice, or what was never granted, is harmless.
func (w *Worker) releaseDevices(key string) {
	if !w.gpuWorker() {
		return
	}
	w.slots.ungrant(key)
}

// runBound runs the attempt on GPUs of its own, one per slot the slot book
// gave it. The book never admits more slots than there are GPUs, and the
// GPUs are given back (when the attempt has ended, before it is settled)
// before the slots are, so the grant cannot fall short.
func (w *Worker) runBound(r *running, key string) outcome {
	devs, ok := w.grantDevices(key, max(r.slots, 1), r.job.Spec.ShareMilli())
	if !ok {
		// Cannot happen while slots <= GPUs; if it does, the attempt
		// fails (and retries) rather than share a GPU.
		return outcome{err: fmt.Errorf("no free GPU on worker %s for %s", w.ID(), key)}
	}
	defer w.releaseDevices(key)
	r.gpus = devs
	r.share = w.slots.share(key)
	return w.run(r)
}

// gpuReport lists the worker's GPUs with the job holding each (the jobs
// sharing it, comma-separated, and the thousandths they hold), for the
// registry; nil on a worker without GPUs. Called with w.mu held.
func (w *Worker) gpuReport() []queues.GPUInfo {
	if !w.gpuWorker() {
		return nil
	}
	slots := w.slots.gpuSlots()
	out := make([]queues.GPUInfo, len(slots))
	for i, s := range slots {
		job := w.jobOf(s.Holder)
		if len(s.Sharers) > 0 {
			ids := make([]string, len(s.Sharers))
			for k, key := range s.Sharers {
				ids[k] = w.jobOf(key)
			}
			job = strings.Join(ids, ",")
		}
		out[i] = queues.GPUInfo{Index: s.Device.Index, UUID: s.Device.UUID, Name: s.Device.Name, MemoryMiB: s.Device.MemoryMiB, Job: job, Share: s.Used}
	}
	return out
}

// jobOf is the job ID of the attempt holding key ("" for none). Called
// with w.mu held.
func (w *Worker) jobOf(key string) string {
	if r := w.jobs[key]; r != nil {
		return r.job.ID
	}
	if k := strings.LastIndexByte(key, ':'); k > 0 {
		return key[:k] // a task ID is job:attempt
	}
	return key
}

// workerLabels are what the worker reports of itself: the configured
// labels, with gpu_model from its GPUs on a GPU worker (the devices know
// their model better than a config file does).
func workerLabels(configured map[string]string, devs []gpu.Device) map[string]string {
	if len(configured) == 0 && len(devs) == 0 {
		return nil
	}
	out := make(map[string]string, len(configured)+1)
	for k, v := range configured {
		out[k] = v
	}
	if len(devs) > 0 {
		out[queues.LabelGPUModel] = gpu.Model(devs)
	}
	return out
}
