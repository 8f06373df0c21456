package config

import (
	"fmt"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/workers/runas"
)

// validateRunAs checks the syntax of each template's run_as. Whether the
// user exists is this machine's business, not the file's: runAsWarnings
// reports it for validate-config, and a worker refuses to start without
// it.
func (c Config) validateRunAs(ps *problems) {
	for _, name := range sortedNames(c.Templates) {
		t := c.Templates[name]
		if t.RunAs == "" {
			continue
		}
		field := "templates." + name + ".run_as"
		if err := runas.Check(t.RunAs); err != nil {
			ps.add(field, "%v", err)
		}
		if t.Handler != "" {
			ps.add(field, "handler %q runs inside the worker, as the worker's user; run_as is for command templates: remove it", t.Handler)
		}
	}
}

// TemplateRunAs maps each template that has its own run_as to it, for
// the worker.
func (c Config) TemplateRunAs() map[string]string {
	out := map[string]string{}
	for name, t := range c.Templates {
		if t.RunAs != "" {
			out[name] = t.RunAs
		}
	}
	return out
}

// credentialFields lists the credentials this config gives the services,
// by field, whatever their form.
func (c Config) credentialFields() []string {
	var out []string
	for _, s := range []struct {
		field string
		set   bool
	}{
		{"redis.password", c.Redis.Password != "" || c.Redis.PasswordEnv != "" || c.Redis.PasswordFile != ""},
		{"redis.sentinel_password", c.Redis.SentinelPassword != "" || c.Redis.SentinelPasswordEnv != "" || c.Redis.SentinelPasswordFile != ""},
		{"nats.password", c.NATS.Password != "" || c.NATS.PasswordEnv != "" || c.NATS.PasswordFile != ""},
		{"nats.token", c.NATS.Token != "" || c.NATS.TokenEnv != "" || c.NATS.TokenFile != ""},
		{"nats.nkey_seed_file", c.NATS.NKeySeedFile != ""},
		{"nats.creds_file", c.NATS.CredsFile != ""},
		{"http.api_token", c.HTTP.APIToken != "" || c.HTTP.APITokenEnv != "" || c.HTTP.APITokenFile != ""},
	} {
		if s.set {
			out = append(out, s.field)
		}
	}
	return out
}

// runAsWarnings are validate-config's findings about who jobs run as on
// this machine: a run_as user it does not have (a worker here refuses to
// start), and credentials a job could read because jobs run as the
// worker's own user. lookup resolves a user (runas.Lookup).
func (c Config) runAsWarnings(lookup func(string) (runas.User, error)) []*jobs.FieldError {
	var out []*jobs.FieldError
	unknown := func(field, spec string) {
		if _, err := lookup(spec); err != nil {
			out = append(out, &jobs.FieldError{Field: field, Message: err.Error() + "; a worker on this machine refuses to start"})
		}
	}
	if c.Worker.RunAs != "" {
		unknown("worker.run_as", c.Worker.RunAs)
	}
	exposed := c.Worker.RunAs == ""
	for _, name := range sortedNames(c.Templates) {
		t := c.Templates[name]
		if t.RunAs != "" {
			unknown("templates."+name+".run_as", t.RunAs)
		}
	}
	if creds := c.credentialFields(); exposed && len(creds) > 0 {
		var loose []string
		for _, name := range sortedNames(c.Templates) {
			if t := c.Templates[name]; t.RunAs == "" && t.Handler == "" {
				loose = append(loose, name)
			}
		}
		if len(loose) > 0 || c.AllowRawCommands {
			out = append(out, &jobs.FieldError{Field: "worker.run_as", Message: fmt.Sprintf(
				"not set while credentials are configured (%s): jobs run as the worker's own user and can read every file it can (secret files, other jobs' logs and checkpoints) and, if that user is root, its memory; start workers as root with worker.run_as set to an unprivileged user",
				strings.Join(creds, ", "))})
		}
	}
	return out
}
