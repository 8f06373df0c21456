package config

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// resolveSecret returns a credential written inline, named by an environment
// variable or kept in a file. Config fields follow one naming scheme: the
// value at field, the variable at field_env, the file at field_file. It runs
// at connect time so a rotated secret is picked up on restart without editing
// the config. Empty means no credential.
func resolveSecret(field, value, env, file string) (string, error) {
	switch {
	case value != "":
		return value, nil
	case env != "":
		v, ok := os.LookupEnv(env)
		if !ok || v == "" {
			return "", &jobs.FieldError{Field: field + "_env", Message: fmt.Sprintf("environment variable %s is not set (export it, or drop %s_env)", env, lastSegment(field))}
		}
		return v, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", &jobs.FieldError{Field: field + "_file", Message: err.Error(), Err: err}
		}
		// Secret files usually end with a newline the secret does not contain.
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", &jobs.FieldError{Field: field + "_file", Message: file + " is empty"}
		}
		return v, nil
	}
	return "", nil
}

// checkSecret reports a credential given more than one way, and an
// environment variable name that cannot be one. A variable that is named
// but unset is not a fault of the file: the file is often checked on
// another machine, or before the secret is provisioned; UnsetSecrets lists
// those for `ballast validate-config` to warn about (or, with --strict,
// refuse), and a service that starts without one says so when it
// connects. Files are read only at connect time, for the same reason.
func checkSecret(ps *problems, field, value, env, file string) {
	name := lastSegment(field)
	var given []string
	for _, g := range [][2]string{{value, name}, {env, name + "_env"}, {file, name + "_file"}} {
		if g[0] != "" {
			given = append(given, g[1])
		}
	}
	if len(given) > 1 {
		ps.add(field, "%s are set; keep only one", strings.Join(given, " and "))
	}
	if env != "" && !envNameRE.MatchString(env) {
		ps.add(field+"_env", "%q is not an environment variable name (letters, digits and '_', not starting with a digit)", env)
	}
}

// UnsetSecrets lists the credentials this config names by environment
// variable that getenv does not have, by field ("redis.password_env").
func (c Config) UnsetSecrets(getenv func(string) string) []*jobs.FieldError {
	var out []*jobs.FieldError
	for env, field := range c.secretEnvNames() {
		if envNameRE.MatchString(env) && getenv(env) == "" {
			out = append(out, &jobs.FieldError{Field: field,
				Message: fmt.Sprintf("environment variable %s is not set; export it before starting Ballast", env)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

func lastSegment(field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		return field[i+1:]
	}
	return field
}
