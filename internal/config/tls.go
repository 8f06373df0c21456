package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TLSConfig is the client side of TLS to Redis or NATS. Files are read when a
// connection is built, so certificates can be rotated by a restart.
type TLSConfig struct {
	// Enabled turns TLS on; the other fields are refused without it.
	Enabled bool `yaml:"enabled,omitempty"`
	// CAFile is a PEM bundle of the CAs to trust instead of the system's.
	CAFile string `yaml:"ca_file,omitempty"`
	// CertFile and KeyFile are the client certificate for mutual TLS; give
	// both or neither.
	CertFile string `yaml:"cert_file,omitempty"`
	// KeyFile is the client certificate's private key (PEM).
	KeyFile string `yaml:"key_file,omitempty"`
	// ServerName overrides the name checked against the server certificate
	// (default: the host being dialled).
	ServerName string `yaml:"server_name,omitempty"`
	// InsecureSkipVerify turns off certificate checks: for tests only.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify,omitempty"`
}

func (t TLSConfig) validate(ps *problems, field string) {
	if !t.Enabled {
		// A file given with TLS off is a half-finished change; silently
		// connecting in clear text would be the worst reading of it.
		for _, f := range []struct{ name, v string }{{"ca_file", t.CAFile}, {"cert_file", t.CertFile}, {"key_file", t.KeyFile}, {"server_name", t.ServerName}} {
			if f.v != "" {
				ps.add(field+"."+f.name, "is set but TLS is off; set %s.enabled: true or drop it", field)
			}
		}
		if t.InsecureSkipVerify {
			ps.add(field+".insecure_skip_verify", "is set but TLS is off; set %s.enabled: true or drop it", field)
		}
		return
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		missing := "key_file"
		if t.CertFile == "" {
			missing = "cert_file"
		}
		ps.add(field+"."+missing, "missing: a client certificate needs both cert_file and key_file")
	}
}

// client builds the TLS settings, or nil when TLS is off. host is the server
// name used when ServerName is empty; errors name the field at fault.
func (t TLSConfig) client(field, host string) (*tls.Config, error) {
	if !t.Enabled {
		return nil, nil
	}
	c := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, // opt-in, documented as for tests only
	}
	if c.ServerName == "" {
		c.ServerName = host
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, &jobs.FieldError{Field: field + ".ca_file", Message: err.Error(), Err: err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &jobs.FieldError{Field: field + ".ca_file", Message: fmt.Sprintf("%s holds no PEM certificate", t.CAFile)}
		}
		c.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		for _, f := range []struct{ name, path string }{{"cert_file", t.CertFile}, {"key_file", t.KeyFile}} {
			if f.path == "" {
				return nil, &jobs.FieldError{Field: field + "." + f.name, Message: "missing: a client certificate needs both cert_file and key_file"}
			}
			if _, err := os.Stat(f.path); err != nil {
				return nil, &jobs.FieldError{Field: field + "." + f.name, Message: err.Error(), Err: err}
			}
		}
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, &jobs.FieldError{Field: field + ".cert_file", Message: fmt.Sprintf("cannot load the key pair: %v", err), Err: err}
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}
