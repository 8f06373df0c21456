package jobs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Catalog is the set of templates jobs may name, already defaulted.
type Catalog struct {
	templates map[string]Template
	// AllowRaw lets a submission carry its own command instead of a template.
	// Off by default: a message bus that runs arbitrary commands is a remote
	// shell for anyone who can publish on it.
	AllowRaw bool
	// RawDefaults are the settings of raw-command jobs when AllowRaw is on.
	RawDefaults Template
}

// NewCatalog validates the templates and returns a catalog of their defaulted
// forms. Every problem is reported, each under "templates.NAME".
func NewCatalog(templates map[string]Template) (*Catalog, error) {
	var ps problems
	c := &Catalog{templates: make(map[string]Template, len(templates))}
	for _, name := range slices.Sorted(maps.Keys(templates)) {
		field := "templates." + name
		if !nameRE.MatchString(name) {
			ps.add(field, "a template name uses lower-case letters, digits, '.', '_' or '-' (at most 63)")
		}
		t := templates[name]
		t.validate(field, &ps)
		c.templates[name] = t.WithDefaults()
	}
	c.RawDefaults = Template{Command: []string{"raw"}}.WithDefaults()
	if err := ps.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// Template returns the named template.
func (c *Catalog) Template(name string) (Template, bool) {
	t, ok := c.templates[name]
	return t, ok
}

// Names lists the templates in order.
func (c *Catalog) Names() []string { return slices.Sorted(maps.Keys(c.templates)) }

// Resolve validates a submission against its template and returns the spec to
// store. The error is a *ValidationError naming every bad field.
func (c *Catalog) Resolve(s Submission) (Spec, error) {
	var ps problems
	s.checkEnvelope(&ps)

	var t Template
	known := false
	switch {
	case len(s.Command) > 0 && !c.AllowRaw:
		ps.add("command", "raw commands are disabled on this server; name a template instead (or set allow_raw_commands: true in the config)")
	case len(s.Command) > 0 && s.Template != "":
		ps.add("command", "give template or command, not both")
	case len(s.Command) > 0:
		t = c.RawDefaults
		t.Command = nil
		known = true
	case s.Template == "":
		ps.add("template", "missing: name one of the configured templates")
	default:
		t, known = c.templates[s.Template]
		if !known {
			ps.addErr("template", fmt.Sprintf("unknown template %q (known: %s)", s.Template, c.knownList()), ErrUnknownTemplate)
		}
	}
	if !known {
		// Without a template the parameters cannot be checked; report what we have.
		return Spec{}, ps.err()
	}

	values := make(map[string]any, len(t.Params))
	for _, name := range slices.Sorted(maps.Keys(s.Params)) {
		decl, ok := t.Params[name]
		switch {
		case !ok && len(s.Command) > 0:
			ps.add("params."+name, "a raw command takes no parameters: put the value in the command")
			continue
		case !ok:
			ps.add("params."+name, fmt.Sprintf("unknown parameter (template %q takes: %s)", s.Template, paramList(t)))
			continue
		}
		v, err := decl.Check(s.Params[name])
		if err != nil {
			ps.add("params."+name, err.Error())
			continue
		}
		values[name] = v
	}
	for _, name := range slices.Sorted(maps.Keys(t.Params)) {
		decl := t.Params[name]
		if _, given := s.Params[name]; given {
			continue
		}
		switch {
		case decl.Required:
			ps.add("params."+name, fmt.Sprintf("missing required %s parameter", decl.Type))
		case decl.Default != nil:
			v, err := decl.coerceDefault(decl.Default)
			if err == nil {
				values[name] = v
			}
		}
	}

	spec := Spec{
		Template:         s.Template,
		Params:           values,
		Handler:          t.Handler,
		Class:            t.Class,
		Rhythm:           t.Rhythm,
		Checkpointable:   t.Checkpointable,
		Retryable:        t.Retryable,
		MaxRetries:       *t.MaxRetries,
		NoRetryExitCodes: append([]int(nil), t.NoRetryExitCodes...),
		Timeout:          t.Timeout,
		Grace:            t.Grace,
		Team:             t.Team,
		CoreMaxWait:      t.CoreMaxWait,
		QoS:              t.QoS,
		Limits:           t.Limits,
		Size:             t.Size.clone(),
		Labels:           copyLabels(s.Labels),
		IdempotencyKey:   s.IdempotencyKey,
	}
	if len(s.Command) > 0 {
		spec.Command = append([]string(nil), s.Command...)
	} else {
		spec.Command = t.render(values)
		spec.Env = t.renderEnv(values)
		spec.PassEnv = append([]string(nil), t.PassEnv...)
	}
	if s.Team != "" {
		spec.Team = s.Team
	}
	if s.Class != "" {
		cl, err := ParseClass(s.Class)
		if err == nil {
			spec.Class = cl
		}
	}
	if s.Timeout != nil {
		spec.Timeout = *s.Timeout
	}
	if s.Slots != nil {
		limit := max(t.MaxSlots, t.Size.SlotCount())
		if share := t.Size.GPUShare; share != 0 && *s.Slots > 1 {
			ps.add("slots", fmt.Sprintf("is %d; template %q asks for gpu_share %v, part of one GPU, so its jobs hold one slot", *s.Slots, s.Template, share))
		} else if *s.Slots < 1 || *s.Slots > limit {
			ps.add("slots", fmt.Sprintf("is %d; template %q allows 1 to %d slots per member%s", *s.Slots, s.Template, limit, maxSlotsHint(t)))
		} else {
			spec.Slots = *s.Slots
		}
	}
	if s.GPUShare != nil {
		if *s.GPUShare == 0 {
			ps.add("gpu_share", "is 0; give a share of one GPU above 0 and below 1, or leave gpu_share out")
		}
		spec.GPUShare = *s.GPUShare
		spec.Size.validateShare("gpu_share", &ps)
	}
	if err := ps.err(); err != nil {
		return Spec{}, err
	}
	return spec, nil
}

// maxSlotsHint tells the submitter how a template would allow more slots.
func maxSlotsHint(t Template) string {
	if t.MaxSlots > 0 {
		return ""
	}
	return " (it sets no max_slots, so a submission may only lower its slots)"
}

func (c *Catalog) knownList() string {
	names := c.Names()
	if len(names) == 0 {
		return "none configured"
	}
	if len(names) > 10 {
		names = append(names[:10], "…")
	}
	return strings.Join(names, ", ")
}

func paramList(t Template) string {
	names := slices.Sorted(maps.Keys(t.Params))
	if len(names) == 0 {
		return "no parameters"
	}
	return strings.Join(names, ", ")
}

// copyLabels keeps the stored spec independent of the caller's map.
func copyLabels(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
