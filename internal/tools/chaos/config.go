package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// templateName is the one template the run submits.
const templateName = "chaos-effect"

// effectScript does the job's work (a sleep), then records its one side
// effect: a line "JOB_ID ATTEMPT" appended to the shared file. The shell
// opens the file with O_APPEND and printf writes the short line in one
// write(2), so lines of concurrent jobs never interleave. Nothing is
// written unless the work completed: a job killed mid-sleep leaves no line.
const effectScript = `sleep "$1" && printf '%s %s\n' "$BALLAST_JOB_ID" "$BALLAST_ATTEMPT" >> "$2"`

// writeConfig writes the run's config: one fixed pool served by the worker
// processes, the chaos template, and Ballast's default timings except the
// two TTLs the options name. It returns the config as the processes will
// load it.
func writeConfig(dir, redisAddr, natsURL, effects string, o Options) (string, config.Config, error) {
	cfg := config.Dev()
	cfg.Namespace = "chaos"
	cfg.Redis.Addr = redisAddr
	cfg.NATS.URL = natsURL
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.Controller.WorkerTTL = jobs.Duration(o.WorkerTTL)
	cfg.Controller.LeaderTTL = jobs.Duration(o.LeaderTTL)
	// A fenced or drained worker must give its jobs back quickly; the run
	// never drains on purpose, so this only bounds the end.
	cfg.Worker.DrainTimeout = jobs.Duration(5 * time.Second)
	cfg.Worker.LogDir = filepath.Join(dir, "joblogs")
	cfg.Worker.CheckpointDir = filepath.Join(dir, "checkpoints")
	cfg.Pools = map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: o.Workers * o.Slots, PricePerSlotHour: 1},
	}
	cfg.Pipelines = nil
	retries := 3
	lo, hi := o.MinWork.Seconds(), o.MaxWork.Seconds()
	cfg.Templates = map[string]jobs.Template{
		templateName: {
			Description: "chaos run: sleep, then append one side-effect line",
			Command:     []string{"sh", "-c", effectScript, "sh", "${seconds}", effects},
			Class:       jobs.ClassCore,
			Retryable:   true,
			MaxRetries:  &retries,
			Timeout:     jobs.Duration(time.Minute),
			Grace:       jobs.Duration(2 * time.Second),
			Params: map[string]jobs.ParamSpec{
				"seconds": {Type: jobs.ParamFloat, Required: true, Min: &lo, Max: &hi},
			},
		},
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "", config.Config{}, err
	}
	path := filepath.Join(dir, "ballast.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", config.Config{}, err
	}
	loaded, err := config.Load(path)
	if err != nil {
		return "", config.Config{}, fmt.Errorf("the chaos config does not load: %w", err)
	}
	return path, loaded, nil
}
