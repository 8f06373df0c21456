package pipeline

import "github.com/ballastdev/ballast/orchestrator/model/jobs"

// Overlap says what happens when a pipeline's time comes while its previous
// run is still active. The values follow Kubernetes CronJob's
// concurrencyPolicy.
type Overlap string

const (
	// OverlapForbid skips the new run while the previous one is active (default).
	OverlapForbid Overlap = "forbid"
	// OverlapAllow starts the new run alongside the previous one.
	OverlapAllow Overlap = "allow"
	// OverlapReplace cancels the previous run and starts the new one.
	OverlapReplace Overlap = "replace"
)

// CatchUp says what happens to scheduled times missed while no controller
// was running.
type CatchUp string

const (
	// CatchUpSkip drops missed times; the pipeline waits for its next time (default).
	CatchUpSkip CatchUp = "skip"
	// CatchUpLatest runs the most recent missed time once, and drops the others.
	CatchUpLatest CatchUp = "latest"
)

// Pipeline is one entry of the config's "pipelines" section, keyed by name.
type Pipeline struct {
	// Schedule is a cron spec parsed by robfig/cron: five fields
	// ("30 2 * * *"), six with leading seconds ("*/5 * * * * *"), or a
	// descriptor such as "@daily". "@every" is refused: it counts from when
	// the controller started, so restarts would move the pipeline's times.
	Schedule string `yaml:"schedule" json:"schedule"`
	// TimeZone is an IANA zone name such as "Europe/Berlin"; empty means UTC.
	// The schedule and a clock-time deadline are read in this zone.
	TimeZone string `yaml:"time_zone,omitempty" json:"time_zone,omitempty"`
	// Steps are the pipeline's jobs by step name; DependsOn links them into a DAG.
	Steps map[string]Step `yaml:"steps" json:"steps"`
	// Deadline is when the run's results are due, in one of two forms:
	//   - a clock time "HH:MM" in TimeZone: the first such time after the
	//     scheduled time, so "06:00" for a 23:00 schedule is the next morning;
	//   - a duration such as "3h" or "90m" after the scheduled time.
	// Empty means no deadline.
	Deadline string `yaml:"deadline,omitempty" json:"deadline,omitempty"`
	// Overlap is forbid (default), allow or replace.
	Overlap Overlap `yaml:"overlap,omitempty" json:"overlap,omitempty"`
	// CatchUp is skip (default) or latest.
	CatchUp CatchUp `yaml:"catch_up,omitempty" json:"catch_up,omitempty"`
	// Description is shown by the CLI and the API.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
}

// Step is one job of a pipeline.
type Step struct {
	// Template names a template of the catalog.
	Template string `yaml:"template" json:"template"`
	// Params are the template's parameters, checked by the catalog.
	Params map[string]any `yaml:"params,omitempty" json:"params,omitempty"`
	// Class overrides the placement (core or burst); see StepClass.
	Class string `yaml:"class,omitempty" json:"class,omitempty"`
	// DependsOn names the steps that must succeed before this one starts.
	DependsOn []string `yaml:"depends_on,omitempty" json:"depends_on,omitempty"`
	// PostProcessing marks uploads, reports and visualizations: work that
	// may wait for elastic capacity, so it runs as burst.
	PostProcessing bool `yaml:"post_processing,omitempty" json:"post_processing,omitempty"`
	// CoreMaxWait overrides the template's and the global core_max_wait for
	// this step's job: how long it may wait for fixed quota before it
	// overflows to on-demand capacity (rule 7, with capacity.core_overflow
	// on). A run with a deadline may make the step overflow sooner still
	// (LatestStart). 0 overflows at once.
	CoreMaxWait *jobs.Duration `yaml:"core_max_wait,omitempty" json:"core_max_wait,omitempty"`
}

// WithDefaults returns a copy with Overlap and CatchUp filled in.
func (p Pipeline) WithDefaults() Pipeline {
	if p.Overlap == "" {
		p.Overlap = OverlapForbid
	}
	if p.CatchUp == "" {
		p.CatchUp = CatchUpSkip
	}
	return p
}
