package config

import (
	"fmt"
	"io/fs"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// secretFiles lists the files this config reads secrets from, by field.
func (c Config) secretFiles() [][2]string {
	var out [][2]string
	for _, f := range [][2]string{
		{"redis.password_file", c.Redis.PasswordFile},
		{"redis.sentinel_password_file", c.Redis.SentinelPasswordFile},
		{"redis.tls.key_file", c.Redis.TLS.KeyFile},
		{"nats.password_file", c.NATS.PasswordFile},
		{"nats.token_file", c.NATS.TokenFile},
		{"nats.nkey_seed_file", c.NATS.NKeySeedFile},
		{"nats.creds_file", c.NATS.CredsFile},
		{"nats.tls.key_file", c.NATS.TLS.KeyFile},
		{"http.api_token_file", c.HTTP.APITokenFile},
	} {
		if f[1] != "" {
			out = append(out, f)
		}
	}
	return out
}

// secretFileWarnings reports secret files that other users may read (a
// job run as another user among them, which run_as exists to keep out),
// and those this machine cannot read, which stop a service here at
// start. stat is os.Stat.
func (c Config) secretFileWarnings(stat func(string) (fs.FileInfo, error)) []*jobs.FieldError {
	var out []*jobs.FieldError
	for _, f := range c.secretFiles() {
		fi, err := stat(f[1])
		switch {
		case err != nil:
			out = append(out, &jobs.FieldError{Field: f[0], Message: fmt.Sprintf("cannot be read here (%v); a service on this machine will not start", err)})
		case fi.Mode().Perm()&0o077 != 0:
			out = append(out, &jobs.FieldError{Field: f[0], Message: fmt.Sprintf(
				"%s is readable by %s (mode %04o), jobs run as other users included: chmod 600 %s, owned by the user Ballast runs as",
				f[1], whoElse(fi.Mode().Perm()), fi.Mode().Perm(), f[1])})
		}
	}
	return out
}

// inlineSecretWarnings reports secrets written in the config file itself
// when the file is open to other users. stat is os.Stat.
func (c Config) inlineSecretWarnings(path string, stat func(string) (fs.FileInfo, error)) []*jobs.FieldError {
	fi, err := stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	var out []*jobs.FieldError
	for _, s := range [][2]string{
		{"redis.password", c.Redis.Password},
		{"redis.sentinel_password", c.Redis.SentinelPassword},
		{"nats.password", c.NATS.Password},
		{"nats.token", c.NATS.Token},
		{"http.api_token", c.HTTP.APIToken},
	} {
		if s[1] != "" {
			out = append(out, &jobs.FieldError{Field: s[0], Message: fmt.Sprintf(
				"is written in %s, which is readable by %s (mode %04o), jobs run as other users included: move it to %s_file (mode 0600)",
				path, whoElse(fi.Mode().Perm()), fi.Mode().Perm(), lastSegment(s[0]))})
		}
	}
	return out
}

func whoElse(m fs.FileMode) string {
	switch {
	case m&0o007 != 0:
		return "every user"
	default:
		return "its group"
	}
}
