package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/nats-io/nats.go"
)

// Reconnect settings for every NATS connection. Ballast's services outlive
// NATS restarts, so they retry forever; the wait is short because events
// buffer in the client meanwhile.
const (
	natsReconnectWait = time.Second
	natsClientName    = "ballast"
)

var (
	subjectPrefixRE = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
	streamNameRE    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// NATSConfig is the connection to NATS, which carries submissions and events,
// and the JetStream stream that keeps event history.
type NATSConfig struct {
	// URL is one server URL or a comma-separated list (nats, tls, ws or wss).
	URL string `yaml:"url,omitempty"`

	// At most one way to authenticate: user and password, a token, an nkey
	// seed file or a credentials file. The _env forms name an environment
	// variable holding the secret, the _file forms a file holding it (a
	// trailing newline is dropped); a file readable by Ballast's user only
	// is the form no job can reach (docs/security.md: Jobs as another user).
	User         string `yaml:"user,omitempty"`
	Password     string `yaml:"password,omitempty"`
	PasswordEnv  string `yaml:"password_env,omitempty"`
	PasswordFile string `yaml:"password_file,omitempty"`
	Token        string `yaml:"token,omitempty"`
	TokenEnv     string `yaml:"token_env,omitempty"`
	TokenFile    string `yaml:"token_file,omitempty"`
	NKeySeedFile string `yaml:"nkey_seed_file,omitempty"`
	CredsFile    string `yaml:"creds_file,omitempty"`

	// TLS secures the connection.
	TLS TLSConfig `yaml:"tls,omitempty"`

	// InboxPrefix replaces "_INBOX" in the reply subjects this process
	// listens on, so that a NATS server can let each user subscribe to its
	// own replies only ("_INBOX_submitter.>", see deploy/nats/ballast.conf).
	// Empty keeps the nats.go default, which any user may then read.
	InboxPrefix string `yaml:"inbox_prefix,omitempty"`

	// SubjectPrefix starts every subject: PREFIX.jobs.submit,
	// PREFIX.events.job.<id>. Default: the namespace.
	SubjectPrefix string `yaml:"subject_prefix,omitempty"`
	// Stream is the JetStream stream of event history. Default: the
	// namespace in upper case with _EVENTS appended.
	Stream string `yaml:"stream,omitempty"`
	// StreamMaxAge is how long events are kept.
	StreamMaxAge jobs.Duration `yaml:"stream_max_age,omitempty"`
	// StreamReplicas is how many servers of a NATS cluster keep the event
	// stream: 1 (default; a single server), 3 or 5.
	StreamReplicas int `yaml:"stream_replicas,omitempty"`
}

// Options builds nats.go connect options: authentication (secrets resolved
// now), TLS, a client name and reconnect-forever settings. Options appended
// later override these, for example nats.Name("ballast-worker-3").
// Errors are *jobs.FieldError naming the field at fault.
func (n NATSConfig) Options() ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Name(natsClientName),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(natsReconnectWait),
	}
	switch {
	case n.User != "":
		pw, err := resolveSecret("nats.password", n.Password, n.PasswordEnv, n.PasswordFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfo(n.User, pw))
	case n.Token != "" || n.TokenEnv != "" || n.TokenFile != "":
		tok, err := resolveSecret("nats.token", n.Token, n.TokenEnv, n.TokenFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Token(tok))
	case n.NKeySeedFile != "":
		opt, err := nats.NkeyOptionFromSeed(n.NKeySeedFile)
		if err != nil {
			return nil, &jobs.FieldError{Field: "nats.nkey_seed_file", Message: err.Error(), Err: err}
		}
		opts = append(opts, opt)
	case n.CredsFile != "":
		// nats.go reads the file only when dialling; reading it here makes a
		// missing file an error that names the field instead of a failed connect.
		if _, err := os.ReadFile(n.CredsFile); err != nil {
			return nil, &jobs.FieldError{Field: "nats.creds_file", Message: err.Error(), Err: err}
		}
		opts = append(opts, nats.UserCredentials(n.CredsFile))
	}
	if n.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(n.InboxPrefix))
	}
	// nats.go fills in the server name from the URL it dials, so no host here.
	tlsConf, err := n.TLS.client("nats.tls", "")
	if err != nil {
		return nil, err
	}
	if tlsConf != nil {
		opts = append(opts, nats.Secure(tlsConf))
	}
	return opts, nil
}

func (n NATSConfig) validate(ps *problems) {
	n.validateURL(ps)
	var methods []string
	if n.User != "" || n.Password != "" || n.PasswordEnv != "" || n.PasswordFile != "" {
		methods = append(methods, "user")
		if n.User == "" {
			ps.add("nats.user", "missing: a password needs a user")
		}
		if n.Password == "" && n.PasswordEnv == "" && n.PasswordFile == "" {
			ps.add("nats.password", "missing: user %q needs password, password_env or password_file", n.User)
		}
	}
	if n.Token != "" || n.TokenEnv != "" || n.TokenFile != "" {
		methods = append(methods, "token")
	}
	if n.NKeySeedFile != "" {
		methods = append(methods, "nkey_seed_file")
	}
	if n.CredsFile != "" {
		methods = append(methods, "creds_file")
	}
	if len(methods) > 1 {
		ps.add("nats."+methods[1], "%s are set; NATS takes one way to authenticate, keep only one", strings.Join(methods, " and "))
	}
	checkSecret(ps, "nats.password", n.Password, n.PasswordEnv, n.PasswordFile)
	checkSecret(ps, "nats.token", n.Token, n.TokenEnv, n.TokenFile)
	n.TLS.validate(ps, "nats.tls")
	if !subjectPrefixRE.MatchString(n.SubjectPrefix) {
		ps.add("nats.subject_prefix", "%q is not a subject prefix: use tokens of letters, digits, '_' or '-' joined by '.', no wildcards", n.SubjectPrefix)
	}
	if n.InboxPrefix != "" && !subjectPrefixRE.MatchString(n.InboxPrefix) {
		ps.add("nats.inbox_prefix", "%q is not an inbox prefix: use tokens of letters, digits, '_' or '-' joined by '.', no wildcards, for example _INBOX_submitter", n.InboxPrefix)
	}
	if !streamNameRE.MatchString(n.Stream) {
		ps.add("nats.stream", "%q is not a stream name: use 1 to 64 letters, digits, '_' or '-'", n.Stream)
	}
	positive(ps, "nats.stream_max_age", n.StreamMaxAge)
	if n.StreamReplicas != 0 && n.StreamReplicas != 1 && n.StreamReplicas != 3 && n.StreamReplicas != 5 {
		ps.add("nats.stream_replicas", "%d: use 1 (one server), 3 or 5 (a cluster of at least that many JetStream servers)", n.StreamReplicas)
	}
}

func (n NATSConfig) validateURL(ps *problems) {
	if strings.TrimSpace(n.URL) == "" {
		ps.add("nats.url", "missing: give the server URL, for example nats://127.0.0.1:4222")
		return
	}
	for _, raw := range strings.Split(n.URL, ",") {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.Host == "" {
			ps.add("nats.url", "%q is not a URL; write it like nats://127.0.0.1:4222", strings.TrimSpace(raw))
			continue
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			ps.add("nats.url", "scheme %q is not supported (use nats, tls, ws or wss)", u.Scheme)
		}
		if u.User != nil {
			ps.add("nats.url", "%s carries credentials; move them to nats.user and nats.password_env so they stay out of logs", fmt.Sprintf("%s://%s", u.Scheme, u.Host))
		}
	}
}
