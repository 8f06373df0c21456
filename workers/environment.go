package workers

import (
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/workers/gpu"
)

// defaultPath is a job's PATH when the worker has none: a worker started by
// an init system with an empty environment must still run "sh".
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// environment builds the environment a job process sees. It is built, never
// inherited: the worker's environment holds its credentials (the API token,
// the Redis password, the NATS token), and whatever a job sees may end up in
// its log. In order, later entries winning: the base variables from the
// worker (PATH, HOME, LANG, TZ), the template's env, the variables it
// passes from the worker, and last the contract variables, so no template
// can fake a job ID or a checkpoint directory. On a GPU worker the contract
// includes the device variables (deviceEnv) for the GPUs granted to the
// attempt.
func environment(j jobs.Job, ckDir string, gpus []gpu.Device, gpuWorker bool) []string {
	return environmentOf(j, ckDir, gpus, gpuWorker, nil)
}

// gangEnv is a gang member's place in its gang (nil for other jobs).
type gangEnv struct {
	member, members int
	coordinator     string
}

// environmentOf is environment for a job that may be a gang's member: it
// also sees BALLAST_REPLICA, BALLAST_REPLICAS and BALLAST_COORDINATOR.
func environmentOf(j jobs.Job, ckDir string, gpus []gpu.Device, gpuWorker bool, g *gangEnv) []string {
	vars := make(map[string]string, 8+len(j.Spec.Params)+len(j.Spec.Env)+len(j.Spec.PassEnv))
	for _, name := range jobs.BaseEnv {
		if v, ok := os.LookupEnv(name); ok {
			vars[name] = v
		}
	}
	if vars["PATH"] == "" {
		vars["PATH"] = defaultPath
	}
	for name, v := range j.Spec.Env {
		if passable(name) {
			vars[name] = v
		}
	}
	for _, name := range j.Spec.PassEnv {
		if v, ok := os.LookupEnv(name); ok && passable(name) {
			vars[name] = v
		}
	}
	vars[jobs.EnvJobID] = j.ID
	vars[jobs.EnvAttempt] = strconv.Itoa(j.Attempt)
	vars[jobs.EnvCheckpointDir] = ckDir
	vars[jobs.EnvResumeFrom] = j.Checkpoint
	if g != nil {
		vars[jobs.EnvReplica] = strconv.Itoa(g.member)
		vars[jobs.EnvReplicas] = strconv.Itoa(g.members)
		vars[jobs.EnvCoordinator] = g.coordinator
	}
	if gpuWorker {
		deviceEnv(vars, gpus)
	}
	for name, v := range j.Spec.Params {
		vars[jobs.EnvParamPrefix+strings.ToUpper(name)] = jobs.FormatParam(normalise(v))
	}
	env := make([]string, 0, len(vars))
	for name, v := range vars {
		env = append(env, name+"="+v)
	}
	sort.Strings(env) // a stable order makes a job's environment reproducible
	return env
}

// passable re-checks, on the worker, a name the spec asks for. Config
// validation already refused bad names, but the spec comes out of Redis and
// the worker's own BALLAST_ settings (BALLAST_API_TOKEN among them) must
// not reach a job even if a record was written by other means.
func passable(name string) bool {
	return jobs.ValidEnvName(name) && !jobs.ReservedEnvName(name)
}

// deviceEnv binds a job on a GPU worker to its granted GPUs by UUID (an
// index depends on CUDA_DEVICE_ORDER, a UUID does not). A job granted none
// sees none: CUDA_VISIBLE_DEVICES empty hides every device from CUDA, and
// NVIDIA_VISIBLE_DEVICES=void gives a container started from the job no
// GPU.
func deviceEnv(vars map[string]string, gpus []gpu.Device) {
	ids := gpu.UUIDs(gpus)
	vars[jobs.EnvCUDAVisibleDevices] = ids
	vars[jobs.EnvNvidiaVisibleDevices] = ids
	if ids == "" {
		vars[jobs.EnvNvidiaVisibleDevices] = jobs.NoNvidiaDevices
	}
	vars[jobs.EnvGPUs] = ids
}

// EnvMPSThreadPercentage is the variable through which NVIDIA's MPS
// limits the part of a GPU's compute a client may use.
const EnvMPSThreadPercentage = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"

// mpsEnv is the MPS variable for a job sharing a GPU: its share in
// percent, rounded up (MPS takes whole percents, and rounding down would
// give a share of 0.001 nothing at all).
func mpsEnv(share int) string {
	pct := min(max((share+9)/10, 1), 100)
	return EnvMPSThreadPercentage + "=" + strconv.Itoa(pct)
}
