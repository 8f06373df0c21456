package jobs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Limits on templates and jobs. They are part of the documented contract.
const (
	// DefaultTimeout applies when a template names none. asynq's own default
	// (30 minutes) is far too short for training jobs, so every task carries
	// the job's timeout explicitly.
	DefaultTimeout = time.Hour
	// MaxTimeout bounds a job's timeout.
	MaxTimeout = 7 * 24 * time.Hour
	// DefaultGrace is how long a job gets between SIGTERM and SIGKILL.
	DefaultGrace = 30 * time.Second
	// MaxGrace bounds the grace period.
	MaxGrace = 15 * time.Minute
	// MaxRetriesLimit bounds max_retries.
	MaxRetriesLimit = 100
	// DefaultRetries applies to retryable templates that name no max_retries.
	DefaultRetries = 3
)

var (
	nameRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)
	paramRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	placeRE = regexp.MustCompile(`\$\{([^}]*)\}`)
)

// Template is a named, validated recipe declared in config. A job names a
// template and passes its parameters; it cannot change the command.
type Template struct {
	// Command is the argv of the job's process. "${name}" inside an argument is
	// replaced by the parameter's value; there is no shell, so values cannot
	// inject commands.
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	// Handler names an in-process Go handler registered with the worker,
	// instead of Command (library use and benchmarks).
	Handler string `yaml:"handler,omitempty" json:"handler,omitempty"`
	// Params declares the typed parameters by name.
	Params map[string]ParamSpec `yaml:"params,omitempty" json:"params,omitempty"`
	// Env sets variables in the job's environment; a value may use
	// "${name}" like the command. The job inherits nothing else from the
	// worker but PATH, HOME, LANG and TZ (see BaseEnv).
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// PassEnv names variables copied from the worker's environment into the
	// job's, when the worker has them. Config validation refuses names that
	// hold the worker's own credentials.
	PassEnv []string `yaml:"pass_env,omitempty" json:"pass_env,omitempty"`
	// RunAs overrides worker.run_as for this template's jobs: the
	// unprivileged user (a name, or UID:GID) a root worker starts them
	// as. It stays in the config: the worker looks it up by the
	// template's name, so no job record can choose its user.
	RunAs string `yaml:"run_as,omitempty" json:"run_as,omitempty"`
	// Class is core or burst; empty takes the rhythm's default.
	Class Class `yaml:"class,omitempty" json:"class,omitempty"`
	// Rhythm is periodic, pulse, mixed or sweep; empty means pulse for burst
	// templates and periodic for core ones.
	Rhythm Rhythm `yaml:"rhythm,omitempty" json:"rhythm,omitempty"`
	// Checkpointable jobs write a checkpoint on SIGTERM and can be moved or
	// preempted without losing completed work.
	Checkpointable bool `yaml:"checkpointable,omitempty" json:"checkpointable,omitempty"`
	// Retryable jobs are retried on failure (up to MaxRetries) and may run on spot.
	Retryable bool `yaml:"retryable,omitempty" json:"retryable,omitempty"`
	// MaxRetries is how many times a failed retryable job is tried again.
	MaxRetries *int `yaml:"max_retries,omitempty" json:"max_retries,omitempty"`
	// NoRetryExitCodes are exit codes that end a retryable job as failed
	// at once: the job's way of saying "trying again will not help" (bad
	// input, a missing file), so no retry is spent on them.
	NoRetryExitCodes []int `yaml:"no_retry_exit_codes,omitempty" json:"no_retry_exit_codes,omitempty"`
	// Timeout bounds one attempt's run time.
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Grace is the time between SIGTERM and SIGKILL, for writing a checkpoint.
	Grace Duration `yaml:"grace,omitempty" json:"grace,omitempty"`
	// Team is charged for the job unless the submission names another team.
	Team string `yaml:"team,omitempty" json:"team,omitempty"`
	// CoreMaxWait overrides capacity.core_max_wait for this template's core
	// jobs: how long one may wait for fixed quota before it overflows to
	// on-demand capacity (rule 7, when capacity.core_overflow is on). A
	// pointer, because 0 is meaningful: overflow at once.
	CoreMaxWait *Duration `yaml:"core_max_wait,omitempty" json:"core_max_wait,omitempty"`
	// QoS names the QoS group (qos.groups) this template's jobs run in,
	// in place of the one their team or placement would choose.
	QoS string `yaml:"qos,omitempty" json:"qos,omitempty"`
	// Limits are each job's own resource limits, within its group's.
	Limits *Limits `yaml:"limits,omitempty" json:"limits,omitempty"`
	// Size is each job's size: slots per member, replicas, cpus, memory
	// and the worker labels it requires.
	Size `yaml:",inline"`
	// MaxSlots lets a submission ask for up to this many slots per member;
	// 0 lets it only lower the template's slots.
	MaxSlots int `yaml:"max_slots,omitempty" json:"max_slots,omitempty"`
	// Description is shown by the CLI and the API.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
}

// WithDefaults returns a copy with every optional field filled in.
func (t Template) WithDefaults() Template {
	switch {
	case t.Rhythm == "" && t.Class == ClassCore:
		t.Rhythm = RhythmPeriodic
	case t.Rhythm == "":
		t.Rhythm = RhythmPulse
	}
	if t.Class == "" {
		t.Class = t.Rhythm.DefaultClass()
	}
	if t.Timeout == 0 {
		t.Timeout = Duration(DefaultTimeout)
	}
	if t.Grace == 0 {
		t.Grace = Duration(DefaultGrace)
	}
	if t.MaxRetries == nil {
		n := 0
		if t.Retryable {
			n = DefaultRetries
		}
		t.MaxRetries = &n
	}
	return t
}

// Validate checks the template declared at config path field (for example
// "templates.train") and returns every problem found.
func (t Template) Validate(field string) error {
	var ps problems
	t.validate(field, &ps)
	return ps.err()
}

func (t Template) validate(field string, ps *problems) {
	switch {
	case len(t.Command) == 0 && t.Handler == "":
		ps.add(field+".command", "missing: give the argv to run (or handler for an in-process Go handler)")
	case len(t.Command) > 0 && t.Handler != "":
		ps.add(field+".handler", "give command or handler, not both")
	}
	if len(t.Command) > 0 && strings.TrimSpace(t.Command[0]) == "" {
		ps.add(field+".command[0]", "the program name is empty")
	}
	if t.Class != "" {
		if _, err := ParseClass(string(t.Class)); err != nil {
			ps.add(field+".class", err.Error())
		}
	}
	if t.Rhythm != "" {
		if _, err := ParseRhythm(string(t.Rhythm)); err != nil {
			ps.add(field+".rhythm", err.Error())
		}
	}
	if t.Timeout < 0 || t.Timeout.Std() > MaxTimeout {
		ps.add(field+".timeout", fmt.Sprintf("must be between 0 (default %s) and %s", DefaultTimeout, MaxTimeout))
	}
	if t.Grace < 0 || t.Grace.Std() > MaxGrace {
		ps.add(field+".grace", fmt.Sprintf("must be between 0 (default %s) and %s", DefaultGrace, MaxGrace))
	}
	if t.CoreMaxWait != nil && *t.CoreMaxWait < 0 {
		ps.add(field+".core_max_wait", fmt.Sprintf("is %s; write 0 to overflow at once, or a positive wait such as 15m", *t.CoreMaxWait))
	}
	if t.MaxRetries != nil {
		if *t.MaxRetries < 0 || *t.MaxRetries > MaxRetriesLimit {
			ps.add(field+".max_retries", fmt.Sprintf("must be between 0 and %d", MaxRetriesLimit))
		}
		if *t.MaxRetries > 0 && !t.Retryable {
			ps.add(field+".max_retries", "set retryable: true as well, or drop max_retries")
		}
	}
	if len(t.NoRetryExitCodes) > 0 && !t.Retryable {
		ps.add(field+".no_retry_exit_codes", "only a retryable template retries; set retryable: true or drop no_retry_exit_codes")
	}
	for i, c := range t.NoRetryExitCodes {
		if c < 1 || c > 255 {
			ps.add(fmt.Sprintf("%s.no_retry_exit_codes[%d]", field, i), fmt.Sprintf("%d is not a failing exit code (1 to 255)", c))
		}
	}
	if t.Team != "" && !nameRE.MatchString(t.Team) {
		ps.add(field+".team", "use lower-case letters, digits, '.', '_' or '-' (at most 63)")
	}
	for _, name := range slices.Sorted(maps.Keys(t.Params)) {
		pf := field + ".params." + name
		if !paramRE.MatchString(name) {
			ps.add(pf, "a parameter name uses lower-case letters, digits and '_' and does not start with a digit")
		}
		t.Params[name].validate(pf, ps)
	}
	t.validateEnv(field, ps)
	t.Size.validate(field, t.MaxSlots, ps)
	if t.GPUShare != 0 && t.MaxSlots > 1 {
		ps.add(field+".max_slots", fmt.Sprintf("is %d with gpu_share %v; a shared job holds one slot, so leave max_slots out", t.MaxSlots, t.GPUShare))
	}
	if t.MaxSlots < 0 || t.MaxSlots > MaxSlots {
		ps.add(field+".max_slots", fmt.Sprintf("is %d; give 1 to %d, or leave it out", t.MaxSlots, MaxSlots))
	}
	for i, arg := range t.Command {
		for _, m := range placeRE.FindAllStringSubmatch(arg, -1) {
			if _, ok := t.Params[m[1]]; !ok {
				ps.add(fmt.Sprintf("%s.command[%d]", field, i), fmt.Sprintf("${%s} names no declared parameter", m[1]))
			}
		}
	}
}

// render builds the argv with parameter values substituted.
func (t Template) render(values map[string]any) []string {
	if len(t.Command) == 0 {
		return nil
	}
	out := make([]string, len(t.Command))
	for i, arg := range t.Command {
		out[i] = substitute(arg, values)
	}
	return out
}

// substitute replaces each "${name}" in s by the parameter's value.
func substitute(s string, values map[string]any) string {
	return placeRE.ReplaceAllStringFunc(s, func(m string) string {
		v, ok := values[m[2:len(m)-1]]
		if !ok {
			return "" // an optional parameter left unset renders empty
		}
		return FormatParam(v)
	})
}
