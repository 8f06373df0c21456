package jobs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// A job's environment is built, never inherited from the worker: the worker's
// own environment holds its credentials (Kubernetes loads them with envFrom),
// and a job that prints its environment would put them in a log the API
// serves. The template's env and pass_env are the only ways in.

// ReservedEnvPrefix starts the names the worker sets for every job (the
// checkpoint contract) and the names of Ballast's own settings, such as
// BALLAST_API_TOKEN. A template may neither set nor pass such a name.
const ReservedEnvPrefix = "BALLAST_"

// Contract variables: what every job process sees besides its template's
// env and pass_env, and BALLAST_PARAM_<NAME> for each parameter.
const (
	EnvJobID         = "BALLAST_JOB_ID"
	EnvAttempt       = "BALLAST_ATTEMPT"
	EnvCheckpointDir = "BALLAST_CHECKPOINT_DIR"
	EnvResumeFrom    = "BALLAST_RESUME_FROM"
	EnvParamPrefix   = "BALLAST_PARAM_"
	// EnvGPUs lists the UUIDs of the GPUs bound to the attempt, comma
	// separated; set on GPU workers only ("" when it was given none).
	EnvGPUs = "BALLAST_GPUS"
	// Gang variables, set for the members of a gang (replicas above 1)
	// only: the member's index (0 to n-1), n, and the host:port member 0's
	// worker chose for the gang's coordinator (member 0 listens there).
	EnvReplica     = "BALLAST_REPLICA"
	EnvReplicas    = "BALLAST_REPLICAS"
	EnvCoordinator = "BALLAST_COORDINATOR"
)

// Device variables: on a GPU worker they bind a job to the GPUs its attempt
// was granted (their UUIDs, comma separated) and hide the rest; a job given
// none sees CUDA_VISIBLE_DEVICES empty and NVIDIA_VISIBLE_DEVICES "void"
// (NVIDIA's container runtime's value for no GPU at all). Only the worker
// sets them, so a template may neither set nor pass them: a job choosing
// its own devices would run on GPUs another job holds.
const (
	EnvCUDAVisibleDevices   = "CUDA_VISIBLE_DEVICES"
	EnvNvidiaVisibleDevices = "NVIDIA_VISIBLE_DEVICES"
	// NoNvidiaDevices is NVIDIA_VISIBLE_DEVICES for a job given no GPU.
	NoNvidiaDevices = "void"
)

// DeviceEnv names the device variables.
var DeviceEnv = []string{EnvCUDAVisibleDevices, EnvNvidiaVisibleDevices}

// ReservedEnvName reports whether only the worker may set name: the
// BALLAST_ prefix and the device variables.
func ReservedEnvName(name string) bool {
	return strings.HasPrefix(name, ReservedEnvPrefix) || slices.Contains(DeviceEnv, name)
}

// BaseEnv names the variables a job takes from the worker's environment
// without asking: what programs need to run at all, and nothing secret.
var BaseEnv = []string{"PATH", "HOME", "LANG", "TZ"}

// MaxEnv bounds env plus pass_env of one template.
const MaxEnv = 64

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// ValidEnvName reports whether name can be an environment variable: letters,
// digits and '_', not starting with a digit.
func ValidEnvName(name string) bool { return envNameRE.MatchString(name) }

// validateEnv checks the template's env and pass_env.
func (t Template) validateEnv(field string, ps *problems) {
	if len(t.Env)+len(t.PassEnv) > MaxEnv {
		ps.add(field+".env", fmt.Sprintf("%d variables in env and pass_env; the limit is %d", len(t.Env)+len(t.PassEnv), MaxEnv))
	}
	for _, name := range slices.Sorted(maps.Keys(t.Env)) {
		f := field + ".env." + name
		checkEnvName(f, name, ps)
		v := t.Env[name]
		if strings.IndexByte(v, 0) >= 0 {
			ps.add(f, "the value contains a NUL byte, which no environment can hold")
		}
		for _, m := range placeRE.FindAllStringSubmatch(v, -1) {
			if _, ok := t.Params[m[1]]; !ok {
				ps.add(f, fmt.Sprintf("${%s} names no declared parameter", m[1]))
			}
		}
	}
	seen := make(map[string]bool, len(t.PassEnv))
	for i, name := range t.PassEnv {
		f := fmt.Sprintf("%s.pass_env[%d]", field, i)
		checkEnvName(f, name, ps)
		switch {
		case seen[name]:
			ps.add(f, fmt.Sprintf("%s is listed twice", name))
		case hasKey(t.Env, name):
			ps.add(f, fmt.Sprintf("%s is also set in env; keep one of them", name))
		}
		seen[name] = true
	}
}

func checkEnvName(field, name string, ps *problems) {
	switch {
	case !ValidEnvName(name):
		ps.add(field, fmt.Sprintf("%q is not an environment variable name (letters, digits and '_', not starting with a digit, at most 128)", name))
	case strings.HasPrefix(name, ReservedEnvPrefix):
		ps.add(field, fmt.Sprintf("%s is reserved: names starting with %s are the worker's (the checkpoint contract and Ballast's own settings)", name, ReservedEnvPrefix))
	case slices.Contains(DeviceEnv, name):
		ps.add(field, fmt.Sprintf("%s is reserved: a GPU worker sets it to the GPUs granted to the attempt, and a job choosing its own could use GPUs another job holds; the worker binds each job to GPUs of its own", name))
	}
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// renderEnv substitutes parameter values into the template's env values,
// as render does for the command.
func (t Template) renderEnv(values map[string]any) map[string]string {
	if len(t.Env) == 0 {
		return nil
	}
	out := make(map[string]string, len(t.Env))
	for name, v := range t.Env {
		out[name] = substitute(v, values)
	}
	return out
}
