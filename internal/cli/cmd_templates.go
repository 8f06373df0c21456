package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

const templatesSynopsis = "templates [list] | templates show NAME"

// runTemplates lists the templates jobs may name, or shows one with its
// parameters, from the config this command finds: what `submit` will
// accept, without reading the YAML.
func runTemplates(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "show" {
		return runTemplatesShow(e, args[1:])
	}
	if len(args) > 0 && args[0] == "list" {
		args = args[1:]
	}
	fs := newFlags(e, "templates", templatesSynopsis)
	cfgPath := configFlag(fs)
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 0, "use: ballast "+templatesSynopsis); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if *out == "json" {
		return writeJSON(e.out, templateInfos(cfg))
	}
	var rows [][]any
	for _, t := range templateInfos(cfg) {
		params := make([]string, len(t.Params))
		for i, p := range t.Params {
			params[i] = p.Name
		}
		rows = append(rows, []any{t.Name, t.Class, t.Rhythm, dash(t.Team), dash(strings.Join(params, ",")), dash(t.Description)})
	}
	return table(e.out, "NAME\tCLASS\tRHYTHM\tTEAM\tPARAMS\tDESCRIPTION", rows)
}

func runTemplatesShow(e *env, args []string) error {
	fs := newFlags(e, "templates show", "templates show [flags] NAME")
	cfgPath := configFlag(fs)
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 1, "name one template: ballast templates show NAME"); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	name := fs.Arg(0)
	var t *templateInfo
	infos := templateInfos(cfg)
	for i := range infos {
		if infos[i].Name == name {
			t = &infos[i]
		}
	}
	if t == nil {
		msg := fmt.Sprintf("no template %q in this config", name)
		if s := closest(name, slices.Sorted(maps.Keys(cfg.Templates))); s != "" {
			msg += fmt.Sprintf(": did you mean %s?", s)
		}
		return fmt.Errorf("%s (ballast templates lists them)", msg)
	}
	if *out == "json" {
		return writeJSON(e.out, t)
	}
	retries := "no"
	if t.Retryable {
		retries = fmt.Sprintf("up to %d", t.MaxRetries)
		if len(t.NoRetryExitCodes) > 0 {
			retries += fmt.Sprintf(", never after exit code %s", joinInts(t.NoRetryExitCodes))
		}
	}
	fields := [][]any{
		{"name", t.Name}, {"description", dash(t.Description)}, {"class", t.Class}, {"rhythm", t.Rhythm},
		{"team", dash(t.Team)}, {"timeout", t.Timeout}, {"grace", t.Grace}, {"checkpointable", t.Checkpointable},
		{"retries", retries}, {"command", dash(strings.Join(t.Command, " "))},
	}
	if err := table(e.out, "FIELD\tVALUE", fields); err != nil {
		return err
	}
	if len(t.Params) == 0 {
		_, err := fmt.Fprintln(e.out, "\nno parameters")
		return err
	}
	fmt.Fprintln(e.out)
	var rows [][]any
	for _, p := range t.Params {
		req := "no"
		if p.Required {
			req = "yes"
		}
		rows = append(rows, []any{p.Name, p.Type, req, p.Default, p.Bounds, dash(p.Description)})
	}
	return table(e.out, "PARAM\tTYPE\tREQUIRED\tDEFAULT\tBOUNDS\tDESCRIPTION", rows)
}

// templateInfo is one template as `templates -o json` prints it: its
// settings with defaults filled in, and its parameters in name order.
type templateInfo struct {
	Name             string         `json:"name"`
	Description      string         `json:"description,omitempty"`
	Class            jobs.Class     `json:"class"`
	Rhythm           jobs.Rhythm    `json:"rhythm"`
	Team             string         `json:"team,omitempty"`
	Timeout          jobs.Duration  `json:"timeout"`
	Grace            jobs.Duration  `json:"grace"`
	Checkpointable   bool           `json:"checkpointable"`
	Retryable        bool           `json:"retryable"`
	MaxRetries       int            `json:"max_retries"`
	NoRetryExitCodes []int          `json:"no_retry_exit_codes,omitempty"`
	Command          []string       `json:"command,omitempty"`
	Params           []templateParm `json:"params"`
}

// templateParm is one declared parameter; Default and Bounds are rendered
// as the CLI takes them ("-" for none).
type templateParm struct {
	Name        string         `json:"name"`
	Type        jobs.ParamType `json:"type"`
	Required    bool           `json:"required"`
	Default     string         `json:"default"`
	Bounds      string         `json:"bounds"`
	Description string         `json:"description,omitempty"`
}

func templateInfos(cfg config.Config) []templateInfo {
	var out []templateInfo
	for _, name := range slices.Sorted(maps.Keys(cfg.Templates)) {
		t := cfg.Templates[name].WithDefaults()
		info := templateInfo{Name: name, Description: t.Description, Class: t.Class, Rhythm: t.Rhythm, Team: t.Team,
			Timeout: t.Timeout, Grace: t.Grace, Checkpointable: t.Checkpointable, Retryable: t.Retryable,
			MaxRetries: *t.MaxRetries, NoRetryExitCodes: t.NoRetryExitCodes, Command: t.Command, Params: []templateParm{}}
		for _, pn := range slices.Sorted(maps.Keys(t.Params)) {
			p := t.Params[pn]
			def := "-"
			if p.Default != nil {
				def = jobs.FormatParam(p.Default)
			}
			info.Params = append(info.Params, templateParm{Name: pn, Type: p.Type, Required: p.Required, Default: def,
				Bounds: paramBounds(p), Description: p.Description})
		}
		out = append(out, info)
	}
	return out
}

// paramBounds renders what values a parameter accepts: a range for
// numbers, the choices of an enum, the length limit of a string.
func paramBounds(p jobs.ParamSpec) string {
	num := func(f *float64) string {
		if f == nil {
			return ""
		}
		return strconv.FormatFloat(*f, 'g', -1, 64)
	}
	switch {
	case p.Type == jobs.ParamEnum:
		return strings.Join(p.Values, "|")
	case p.Min != nil && p.Max != nil:
		return num(p.Min) + ".." + num(p.Max)
	case p.Min != nil:
		return ">= " + num(p.Min)
	case p.Max != nil:
		return "<= " + num(p.Max)
	case p.Type == jobs.ParamString:
		n := p.MaxLen
		if n == 0 {
			n = jobs.MaxStringParamBytes
		}
		return fmt.Sprintf("at most %d bytes", n)
	}
	return "-"
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
