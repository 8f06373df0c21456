package config

import (
	"fmt"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// secretEnvNames are the environment variables this config reads
// credentials from, each with the field that names it. A template's
// pass_env must not copy them into a job: that is how a worker's secrets
// would reach a job's log.
func (c Config) secretEnvNames() map[string]string {
	names := map[string]string{}
	for _, s := range [][2]string{
		{c.Redis.PasswordEnv, "redis.password_env"},
		{c.Redis.SentinelPasswordEnv, "redis.sentinel_password_env"},
		{c.NATS.PasswordEnv, "nats.password_env"},
		{c.NATS.TokenEnv, "nats.token_env"},
		{c.HTTP.APITokenEnv, "http.api_token_env"},
	} {
		if s[0] != "" {
			names[s[0]] = s[1]
		}
	}
	return names
}

// validatePassEnv refuses templates that pass the worker's credentials on.
func (c Config) validatePassEnv(ps *problems) {
	secrets := c.secretEnvNames()
	for _, name := range sortedNames(c.Templates) {
		for i, env := range c.Templates[name].PassEnv {
			if strings.HasPrefix(env, jobs.ReservedEnvPrefix) {
				continue // BALLAST_API_TOKEN and the like: reported as reserved by the catalog
			}
			if from, ok := secrets[env]; ok {
				ps.add(fmt.Sprintf("templates.%s.pass_env[%d]", name, i),
					"%s holds a worker credential (%s); jobs never see it: drop it, or give the job its own credential in env", env, from)
			}
		}
	}
}
