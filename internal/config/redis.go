package config

import (
	"net"

	"github.com/ballastdev/ballast/jobs"
	"github.com/redis/go-redis/v9"
)

// RedisConfig is the connection to the Redis that holds job records, the
// worker registry and the asynq queues.
type RedisConfig struct {
	// Addr is host:port.
	Addr string `yaml:"addr,omitempty"`
	// DB is the logical database number.
	DB int `yaml:"db,omitempty"`
	// Username is a Redis 6 ACL user; empty means the default user.
	Username string `yaml:"username,omitempty"`
	// Password, PasswordEnv and PasswordFile are three ways to give the
	// password; at most one may be set. The env and file forms keep the
	// secret out of the config file.
	Password     string `yaml:"password,omitempty"`
	PasswordEnv  string `yaml:"password_env,omitempty"`
	PasswordFile string `yaml:"password_file,omitempty"`
	// TLS secures the connection.
	TLS TLSConfig `yaml:"tls,omitempty"`
	// DialTimeout bounds connecting; short, so a missing Redis is reported
	// quickly instead of stalling start-up.
	DialTimeout jobs.Duration `yaml:"dial_timeout,omitempty"`
}

// Options builds go-redis client options, resolving the password and
// reading TLS files now. Call it on a defaulted config. Errors are
// *jobs.FieldError naming the field at fault.
func (r RedisConfig) Options() (*redis.Options, error) {
	host, _, err := net.SplitHostPort(r.Addr)
	if err != nil {
		return nil, &jobs.FieldError{Field: "redis.addr", Message: "write host:port, for example 127.0.0.1:6379", Err: err}
	}
	password, err := resolveSecret("redis.password", r.Password, r.PasswordEnv, r.PasswordFile)
	if err != nil {
		return nil, err
	}
	// go-redis does not derive the TLS server name from Addr (only its URL
	// parser does), and a handshake without one fails; so pass the host.
	tlsConf, err := r.TLS.client("redis.tls", host)
	if err != nil {
		return nil, err
	}
	return &redis.Options{
		Addr:        r.Addr,
		DB:          r.DB,
		Username:    r.Username,
		Password:    password,
		DialTimeout: r.DialTimeout.Std(),
		TLSConfig:   tlsConf,
	}, nil
}

func (r RedisConfig) validate(ps *problems) {
	if _, _, err := net.SplitHostPort(r.Addr); err != nil || r.Addr == "" {
		ps.add("redis.addr", "%q is not host:port; write it like 127.0.0.1:6379", r.Addr)
	}
	if r.DB < 0 {
		ps.add("redis.db", "must not be negative")
	}
	checkSecret(ps, "redis.password", r.Password, r.PasswordEnv, r.PasswordFile)
	r.TLS.validate(ps, "redis.tls")
	positive(ps, "redis.dial_timeout", r.DialTimeout)
}
