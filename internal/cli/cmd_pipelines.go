package cli

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues/flows"
)

const pipelinesSynopsis = "pipelines [list] | pipelines runs NAME [--limit N] | pipelines show RUN | pipelines trigger NAME | pipelines cancel RUN"

// operatorCancelReason is recorded on runs cancelled from the CLI.
const operatorCancelReason = "cancelled by an operator"

func runPipelines(ctx context.Context, e *env, args []string) error {
	verb := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		verb, args = args[0], args[1:]
	}
	switch verb {
	case "list":
		return runPipelinesList(ctx, e, args)
	case "runs":
		return runPipelinesRuns(ctx, e, args)
	case "show":
		return runPipelinesShow(ctx, e, args)
	case "trigger":
		return runPipelinesTrigger(ctx, e, args)
	case "cancel":
		return runPipelinesCancel(ctx, e, args)
	}
	return usageError{fmt.Sprintf("unknown verb %q; use: %s", verb, pipelinesSynopsis)}
}

// pipelineInfo is one configured pipeline as `pipelines list -o json`
// prints it.
type pipelineInfo struct {
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Schedule    string           `json:"schedule"`
	TimeZone    string           `json:"time_zone"`
	Overlap     pipeline.Overlap `json:"overlap"`
	CatchUp     pipeline.CatchUp `json:"catch_up"`
	Deadline    string           `json:"deadline,omitempty"`
	Steps       []string         `json:"steps"`
	Next        time.Time        `json:"next,omitempty"`
	LastRun     *flows.Run       `json:"last_run,omitempty"`
	loc         *time.Location
}

func runPipelinesList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "pipelines list", "pipelines [list] [-o json]")
	cfgPath := configFlag(fs)
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 0, "pipelines list takes no arguments; to see one pipeline's runs: ballast pipelines runs NAME"); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if len(cfg.Pipelines) == 0 && *out == "table" {
		fmt.Fprintln(e.out, "no pipelines are configured (add a pipelines: section to the config)")
		return nil
	}
	store, closeStore, err := storeFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	fl := flows.New(store)

	now := time.Now()
	infos := make([]pipelineInfo, 0, len(cfg.Pipelines))
	for _, name := range pipelineNames(cfg) {
		def := cfg.Pipelines[name].WithDefaults()
		info := pipelineInfo{Name: name, Description: def.Description, Schedule: def.Schedule, TimeZone: zoneName(def.TimeZone),
			Overlap: def.Overlap, CatchUp: def.CatchUp, Deadline: def.Deadline, Steps: stepOrder(def),
			loc: zoneOf(def.TimeZone)}
		// The config was validated on load, so the schedule parses; if it
		// somehow does not, NEXT stays empty rather than failing the list.
		if s, err := pipeline.Parse(def.Schedule, def.TimeZone); err == nil {
			info.Next = s.Next(now)
		}
		runs, err := fl.ListRuns(ctx, name, 1)
		if err != nil {
			return err
		}
		if len(runs) > 0 {
			info.LastRun = &runs[0]
		}
		infos = append(infos, info)
	}
	if *out == "json" {
		return writeJSON(e.out, infos)
	}
	rows := make([][]any, len(infos))
	for i, p := range infos {
		next := "-"
		if !p.Next.IsZero() {
			next = fmt.Sprintf("%s (%s)", stamp(p.Next, p.loc), ago(p.Next, now))
		}
		last := "-"
		if r := p.LastRun; r != nil {
			last = fmt.Sprintf("%s %s", r.State, stamp(r.Scheduled, p.loc))
		}
		rows[i] = []any{p.Name, p.Schedule, p.TimeZone, p.Overlap, p.CatchUp, next, last}
	}
	return table(e.out, "NAME\tSCHEDULE\tTIME ZONE\tOVERLAP\tCATCH-UP\tNEXT\tLAST RUN", rows)
}

func runPipelinesRuns(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "pipelines runs", "pipelines runs [--limit N] [-o json] NAME")
	cfgPath := configFlag(fs)
	limit := fs.Int("limit", 20, "most runs shown, newest scheduled first")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 1, "name one pipeline: ballast pipelines runs NAME"); err != nil {
		return err
	}
	if *limit <= 0 {
		return usageError{fmt.Sprintf("--limit %d: give a positive number", *limit)}
	}
	name := fs.Arg(0)
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	store, closeStore, err := storeFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	fl := flows.New(store)
	runs, err := fl.ListRuns(ctx, name, *limit)
	if err != nil {
		return err
	}
	// Runs of a pipeline since removed from the config are still worth
	// seeing, so only a name with neither a definition nor runs is an error.
	if _, configured := cfg.Pipelines[name]; !configured && len(runs) == 0 {
		return unknownPipeline(cfg, name)
	}
	if *out == "json" {
		if runs == nil {
			runs = []flows.Run{}
		}
		return writeJSON(e.out, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(e.out, "pipeline %s has no runs yet (start one now with: ballast pipelines trigger %s)\n", name, name)
		return nil
	}
	now := time.Now()
	rows := make([][]any, len(runs))
	for i, r := range runs {
		loc := zoneOf(r.Definition.TimeZone)
		rows[i] = []any{r.ID, stamp(r.Scheduled, loc), r.Trigger, r.State, stepSummary(r), deadlineText(r, loc), ago(r.FinishedAt, now)}
	}
	return table(e.out, "RUN\tSCHEDULED\tTRIGGER\tSTATE\tSTEPS\tDEADLINE\tFINISHED", rows)
}

func runPipelinesShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "pipelines show", "pipelines show [-o json] RUN")
	cfgPath := configFlag(fs)
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 1, "give exactly one run ID (see: ballast pipelines runs NAME)"); err != nil {
		return err
	}
	store, closeFn, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	fl := flows.New(store)
	r, err := fl.GetRun(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if *out == "json" {
		return writeJSON(e.out, r)
	}
	now := time.Now()
	loc := zoneOf(r.Definition.TimeZone)
	header := [][]any{
		{"run", r.ID}, {"pipeline", r.Pipeline}, {"scheduled", stamp(r.Scheduled, loc)}, {"trigger", r.Trigger},
		{"state", r.State}, {"reason", dash(r.Reason)}, {"steps", stepSummary(r)}, {"deadline", deadlineText(r, loc)},
	}
	if !r.DeadlineMissedAt.IsZero() {
		header = append(header, []any{"deadline missed", fmt.Sprintf("noticed %s (%s)", stamp(r.DeadlineMissedAt, loc), ago(r.DeadlineMissedAt, now))})
	}
	header = append(header, []any{"created", ago(r.CreatedAt, now)}, []any{"finished", ago(r.FinishedAt, now)})
	if err := table(e.out, "FIELD\tVALUE", header); err != nil {
		return err
	}
	fmt.Fprintln(e.out)
	rows := [][]any{}
	for _, name := range runStepOrder(r) {
		st := r.Steps[name]
		deps := "-"
		if d := r.Definition.Steps[name].DependsOn; len(d) > 0 {
			deps = strings.Join(d, ", ")
		}
		state := string(st.State)
		if state == "" {
			state = "-"
		}
		rows = append(rows, []any{name, state, dash(st.JobID), deps})
	}
	return table(e.out, "STEP\tSTATE\tJOB\tDEPENDS ON", rows)
}

func runPipelinesTrigger(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "pipelines trigger", "pipelines trigger [-o json] NAME")
	cfgPath := configFlag(fs)
	natsURL := fs.String("nats", "", "NATS URL for the run-started event (default: the config's nats.url)")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 1, "name one pipeline: ballast pipelines trigger NAME"); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if *natsURL != "" {
		cfg.NATS.URL = *natsURL
	}
	cat, err := cfg.Catalog()
	if err != nil {
		return err
	}
	store, closeStore, err := storeFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	pub, closePub := eventPublisher(e, cfg, "ballast-pipelines")
	defer closePub()
	// RecordOnly: the CLI records the run and leaves placing its steps to
	// the leader, whose router knows which elastic pools it manages; the
	// Submitter here is never called but the runner requires one.
	runner, err := controller.NewPipelines(controller.PipelinesOptions{
		Runs:       flows.New(store),
		Jobs:       store,
		Submitter:  &controller.Submitter{Catalog: cat, Store: store, Router: controller.Router{ElasticManaged: true}},
		Catalog:    cat,
		Pipelines:  cfg.Pipelines,
		Events:     pub,
		Logger:     slog.New(slog.NewTextHandler(e.errOut, &slog.HandlerOptions{Level: slog.LevelWarn})),
		RecordOnly: true,
	})
	if err != nil {
		return err
	}
	r, err := runner.Trigger(ctx, fs.Arg(0), time.Now())
	if err != nil {
		return err
	}
	if *out == "json" {
		return writeJSON(e.out, r)
	}
	fmt.Fprintf(e.out, "run %s of %s recorded (%d steps); the controller's leader starts its steps within a tick\n", r.ID, r.Pipeline, len(r.Steps))
	fmt.Fprintf(e.out, "follow it with: ballast pipelines show %s\n", r.ID)
	return nil
}

func runPipelinesCancel(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "pipelines cancel", "pipelines cancel RUN")
	cfgPath := configFlag(fs)
	natsURL := fs.String("nats", "", "NATS URL for the run-cancelled event (default: the config's nats.url)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"give exactly one run ID (see: ballast pipelines runs NAME)"}
	}
	id := fs.Arg(0)
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if *natsURL != "" {
		cfg.NATS.URL = *natsURL
	}
	store, closeStore, err := storeFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	fl := flows.New(store)
	before, err := fl.GetRun(ctx, id)
	if err != nil {
		return err
	}
	if before.State.Terminal() {
		fmt.Fprintf(e.out, "run %s of %s had already ended (%s); nothing changed\n", id, before.Pipeline, before.State)
		return nil
	}
	pub, closePub := eventPublisher(e, cfg, "ballast-pipelines")
	defer closePub()
	cancelErr := controller.CancelRun(ctx, fl, store, pub, id, operatorCancelReason)
	after, err := fl.GetRun(ctx, id)
	if err != nil {
		return err
	}
	if after.State != pipeline.RunCancelled {
		// The leader ended the run between our read and the cancel.
		fmt.Fprintf(e.out, "run %s of %s ended as %s before the cancel took effect; nothing changed\n", id, after.Pipeline, after.State)
		return cancelErr
	}
	running, pending := 0, 0
	for _, st := range before.Steps {
		switch st.State {
		case pipeline.StepRunning:
			running++
		case pipeline.StepPending:
			pending++
		}
	}
	fmt.Fprintf(e.out, "run %s of %s cancelled: %d pending step(s) will not start", id, after.Pipeline, pending)
	if running > 0 {
		fmt.Fprintf(e.out, "; the jobs of %d running step(s) are cancelled (their workers send SIGTERM within a heartbeat)", running)
	}
	fmt.Fprintln(e.out)
	if cancelErr != nil {
		return fmt.Errorf("the run is cancelled, but not every step's job could be: %w (retry: ballast jobs show ID, ballast cancel ID)", cancelErr)
	}
	return nil
}

// eventPublisher connects to NATS for the events a CLI-made change
// publishes. Events only inform followers (the records in Redis decide), so
// an unreachable NATS is a note, not a failure.
func eventPublisher(e *env, cfg config.Config, name string) (events.Publisher, func()) {
	nc, err := connectNATS(cfg, name)
	if err != nil {
		fmt.Fprintf(e.errOut, "note: no event is published: %v\n", err)
		return events.Discard, func() {}
	}
	return eventbus.NewNATSPublisher(nc, subjects(cfg)), func() {
		// Flush so the event leaves before the process exits.
		_ = nc.FlushTimeout(2 * time.Second)
		nc.Close()
	}
}

func unknownPipeline(cfg config.Config, name string) error {
	names := pipelineNames(cfg)
	if len(names) == 0 {
		return fmt.Errorf("unknown pipeline %q: no pipelines are configured and none has runs", name)
	}
	return fmt.Errorf("unknown pipeline %q and no runs of it are kept (configured: %s)", name, strings.Join(names, ", "))
}

func pipelineNames(cfg config.Config) []string { return slices.Sorted(maps.Keys(cfg.Pipelines)) }

// stepOrder returns a pipeline's steps in DAG order, falling back to name
// order for a definition Order refuses (validation keeps those out).
func stepOrder(def pipeline.Pipeline) []string {
	if order, err := pipeline.Order(def); err == nil {
		return order
	}
	return slices.Sorted(maps.Keys(def.Steps))
}

// runStepOrder is stepOrder for a run, with any step the record has but its
// definition lacks appended, so nothing recorded is hidden.
func runStepOrder(r flows.Run) []string {
	order := stepOrder(r.Definition)
	seen := map[string]bool{}
	for _, n := range order {
		seen[n] = true
	}
	var extra []string
	for n := range r.Steps {
		if !seen[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(order, extra...)
}

// stepSummary is "3/4 succeeded", with the failed and cancelled counted
// too, since those decide the run.
func stepSummary(r flows.Run) string {
	counts := map[pipeline.StepState]int{}
	for _, st := range r.Steps {
		counts[st.State]++
	}
	s := fmt.Sprintf("%d/%d succeeded", counts[pipeline.StepSucceeded], len(r.Steps))
	for _, st := range []pipeline.StepState{pipeline.StepRunning, pipeline.StepFailed, pipeline.StepCancelled, pipeline.StepSkipped} {
		if n := counts[st]; n > 0 {
			s += fmt.Sprintf(", %d %s", n, st)
		}
	}
	return s
}

func deadlineText(r flows.Run, loc *time.Location) string {
	if r.Deadline.IsZero() {
		return "-"
	}
	s := stamp(r.Deadline, loc)
	if !r.DeadlineMissedAt.IsZero() {
		s += " MISSED"
	}
	return s
}

// zoneOf resolves a pipeline's zone for display; the config was validated,
// so a failure falls back to UTC rather than hiding the time.
func zoneOf(tz string) *time.Location {
	loc, err := pipeline.LoadZone(tz)
	if err != nil {
		return time.UTC
	}
	return loc
}

func zoneName(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

// stamp renders an absolute time in loc; schedules are read in their
// pipeline's zone, so their times are shown there too.
func stamp(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(loc).Format("2006-01-02 15:04:05 MST")
}
