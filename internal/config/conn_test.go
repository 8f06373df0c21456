package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/redis/go-redis/v9"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRedisPasswordSources(t *testing.T) {
	t.Setenv("BALLAST_TEST_REDIS_PW", "from-env")
	t.Setenv("BALLAST_TEST_EMPTY", "")
	cases := []struct {
		name      string
		cfg       RedisConfig
		want      string
		wantField string // non-empty: Options fails naming this field
	}{
		{"none", RedisConfig{}, "", ""},
		{"inline", RedisConfig{Password: "inline"}, "inline", ""},
		{"env", RedisConfig{PasswordEnv: "BALLAST_TEST_REDIS_PW"}, "from-env", ""},
		{"file without its newline", RedisConfig{PasswordFile: writeFile(t, "pw", "from-file\n")}, "from-file", ""},
		{"env unset", RedisConfig{PasswordEnv: "BALLAST_TEST_NEVER_SET_X"}, "", "redis.password_env"},
		{"env empty", RedisConfig{PasswordEnv: "BALLAST_TEST_EMPTY"}, "", "redis.password_env"},
		{"file missing", RedisConfig{PasswordFile: filepath.Join(t.TempDir(), "nope")}, "", "redis.password_file"},
		{"file empty", RedisConfig{PasswordFile: writeFile(t, "empty", "\n")}, "", "redis.password_file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Addr = "127.0.0.1:6379"
			opts, err := c.cfg.Options()
			if c.wantField != "" {
				assertFieldError(t, err, c.wantField)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts.Password != c.want {
				t.Errorf("password %q, want %q", opts.Password, c.want)
			}
		})
	}
}

func assertFieldError(t *testing.T, err error, field string) {
	t.Helper()
	var fe *jobs.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *jobs.FieldError at %s", err, field)
	}
	if fe.Field != field {
		t.Errorf("error names %s, want %s: %v", fe.Field, field, err)
	}
}

func TestRedisOptions(t *testing.T) {
	cfg := Config{Redis: RedisConfig{Addr: "redis.internal:6380", DB: 3, Username: "ballast",
		TLS: TLSConfig{Enabled: true}}}.WithDefaults()
	opts, err := cfg.Redis.Options()
	if err != nil {
		t.Fatal(err)
	}
	if opts.Addr != "redis.internal:6380" || opts.DB != 3 || opts.Username != "ballast" || opts.DialTimeout != DefaultDialTimeout {
		t.Errorf("options = %+v", opts)
	}
	if opts.TLSConfig == nil || opts.TLSConfig.ServerName != "redis.internal" {
		t.Errorf("TLS server name = %v, want redis.internal taken from addr", opts.TLSConfig)
	}
	if _, err := (RedisConfig{Addr: "no-port"}).Options(); err == nil {
		t.Error("Options accepted an addr without a port")
	} else {
		assertFieldError(t, err, "redis.addr")
	}
}

// TestRedisUniversalOptions checks that each mode builds the client
// go-redis's universal constructor turns into that topology's client.
func TestRedisUniversalOptions(t *testing.T) {
	cases := []struct {
		name string
		cfg  RedisConfig
		want string // the client type NewRedisClient returns
	}{
		{"standalone", RedisConfig{Addr: "10.0.0.1:6379", DB: 2}, "*redis.Client"},
		// One seed must still give a cluster client: go-redis would
		// otherwise treat a single address as a plain server.
		{"cluster one seed", RedisConfig{Mode: RedisCluster, Addrs: []string{"10.0.0.1:7000"}}, "*redis.ClusterClient"},
		{"cluster", RedisConfig{Mode: RedisCluster, Addrs: []string{"10.0.0.1:7000", "10.0.0.2:7000"}}, "*redis.ClusterClient"},
		{"sentinel", RedisConfig{Mode: RedisSentinel, MasterName: "main", Addrs: []string{"10.0.0.1:26379"},
			Password: "data", SentinelPassword: "watch"}, "*redis.Client"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Redis: c.cfg}.WithDefaults()
			var ps problems
			cfg.Redis.validate(&ps)
			for _, fe := range ps.list {
				t.Errorf("valid config refused: %v", fe)
			}
			o, err := cfg.Redis.UniversalOptions()
			if err != nil {
				t.Fatal(err)
			}
			if want := cfg.Redis.Endpoints(); !slices.Equal(o.Addrs, want) {
				t.Errorf("addrs = %v, want %v", o.Addrs, want)
			}
			if c.cfg.Mode == RedisSentinel && (o.MasterName != "main" || o.Password != "data" || o.SentinelPassword != "watch") {
				t.Errorf("sentinel options: master %q, password %q, sentinel password %q", o.MasterName, o.Password, o.SentinelPassword)
			}
			rdb, err := NewRedisClient(cfg.Redis, 8)
			if err != nil {
				t.Fatal(err)
			}
			defer rdb.Close()
			if got := fmt.Sprintf("%T", rdb); got != c.want {
				t.Errorf("client = %s, want %s", got, c.want)
			}
		})
	}
	if _, err := (RedisConfig{Mode: RedisCluster, Addrs: []string{"10.0.0.1:7000"}}).Options(); err == nil {
		t.Error("Options built a standalone client for a cluster config")
	}
}

// TestRedisConnects dials the test Redis with built options. Passwords are
// covered by TestRedisPasswordSources: setting one up on the shared test
// Redis would change it for every other test.
func TestRedisConnects(t *testing.T) {
	cfg := Config{Redis: RedisConfig{Addr: testenv.RedisAddr()}}.WithDefaults()
	opts, err := cfg.Redis.Options()
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		testenv.Unavailable(t, "redis", err)
	}
}

func TestTLSFileErrorsNameTheField(t *testing.T) {
	pki := newTestPKI(t)
	notPEM := writeFile(t, "not.pem", "hello")
	missing := filepath.Join(t.TempDir(), "missing.pem")
	cases := []struct {
		name  string
		tls   TLSConfig
		field string
	}{
		{"missing CA", TLSConfig{Enabled: true, CAFile: missing}, "tls.ca_file"},
		{"CA not PEM", TLSConfig{Enabled: true, CAFile: notPEM}, "tls.ca_file"},
		{"cert without key", TLSConfig{Enabled: true, CertFile: pki.ClientCert}, "tls.key_file"},
		{"key without cert", TLSConfig{Enabled: true, KeyFile: pki.ClientKey}, "tls.cert_file"},
		{"missing key", TLSConfig{Enabled: true, CertFile: pki.ClientCert, KeyFile: missing}, "tls.key_file"},
		{"mismatched pair", TLSConfig{Enabled: true, CertFile: pki.ClientCert, KeyFile: pki.ServerKey}, "tls.cert_file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := RedisConfig{Addr: "127.0.0.1:6379", TLS: c.tls}.Options()
			assertFieldError(t, err, "redis."+c.field)
			_, err = NATSConfig{URL: "nats://127.0.0.1:4222", TLS: c.tls}.Options()
			assertFieldError(t, err, "nats."+c.field)
		})
	}
	_, err := RedisConfig{Addr: "127.0.0.1:6379", TLS: TLSConfig{Enabled: true, CAFile: missing}}.Options()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing CA file is %v, want an error matching fs.ErrNotExist", err)
	}
}

// runNATS starts an embedded NATS server with opts on a random port.
func runNATS(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.Host, opts.Port, opts.NoLog, opts.NoSigs = "127.0.0.1", server.RANDOM_PORT, true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("NATS server not ready within 10s")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

// connect dials with the built options and fails the test if it cannot.
func connect(t *testing.T, url string, n NATSConfig) *nats.Conn {
	t.Helper()
	n.URL = url
	opts, err := n.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, append(opts, nats.Timeout(5*time.Second))...)
	if err != nil {
		t.Fatalf("connect with %+v: %v", n, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func TestNATSAuthAgainstServer(t *testing.T) {
	t.Setenv("BALLAST_TEST_NATS_TOKEN", "tok-from-env")
	t.Setenv("BALLAST_TEST_NATS_PW", "pw-from-env")

	t.Run("token from env", func(t *testing.T) {
		s := runNATS(t, &server.Options{Authorization: "tok-from-env"})
		connect(t, s.ClientURL(), NATSConfig{TokenEnv: "BALLAST_TEST_NATS_TOKEN"})
		// The token is really checked: a wrong one is refused.
		opts, _ := NATSConfig{Token: "wrong"}.Options()
		if nc, err := nats.Connect(s.ClientURL(), append(opts, nats.Timeout(5*time.Second))...); err == nil {
			nc.Close()
			t.Error("a wrong token was accepted; the server is not checking tokens")
		}
	})
	t.Run("user and password from env", func(t *testing.T) {
		s := runNATS(t, &server.Options{Username: "ballast", Password: "pw-from-env"})
		nc := connect(t, s.ClientURL(), NATSConfig{User: "ballast", PasswordEnv: "BALLAST_TEST_NATS_PW"})
		if nc.Opts.Name != natsClientName || nc.Opts.MaxReconnect != -1 {
			t.Errorf("name %q, max reconnects %d; want %q and -1", nc.Opts.Name, nc.Opts.MaxReconnect, natsClientName)
		}
	})
	t.Run("nkey seed file", func(t *testing.T) {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := kp.Seed()
		pub, _ := kp.PublicKey()
		s := runNATS(t, &server.Options{Nkeys: []*server.NkeyUser{{Nkey: pub}}})
		connect(t, s.ClientURL(), NATSConfig{NKeySeedFile: writeFile(t, "user.nk", string(seed)+"\n")})
	})
	t.Run("mutual TLS from files", func(t *testing.T) {
		pki := newTestPKI(t)
		s := runNATS(t, &server.Options{TLS: true, TLSVerify: true, TLSConfig: pki.serverTLS(t), TLSTimeout: 5})
		nc := connect(t, s.ClientURL(), NATSConfig{TLS: TLSConfig{Enabled: true, CAFile: pki.CAFile, CertFile: pki.ClientCert, KeyFile: pki.ClientKey}})
		if !nc.TLSRequired() {
			t.Error("connected without TLS")
		}
		// Without the client certificate the server refuses: the files above
		// were really used.
		opts, err := NATSConfig{TLS: TLSConfig{Enabled: true, CAFile: pki.CAFile}}.Options()
		if err != nil {
			t.Fatal(err)
		}
		if nc, err := nats.Connect(s.ClientURL(), append(opts, nats.Timeout(5*time.Second))...); err == nil {
			nc.Close()
			t.Error("connected without a client certificate; the server is not verifying clients")
		}
	})
}

func TestNATSOptionErrorsNameTheField(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	cases := []struct {
		name  string
		cfg   NATSConfig
		field string
	}{
		{"token env unset", NATSConfig{TokenEnv: "BALLAST_TEST_NEVER_SET_Y"}, "nats.token_env"},
		{"password env unset", NATSConfig{User: "u", PasswordEnv: "BALLAST_TEST_NEVER_SET_Y"}, "nats.password_env"},
		{"nkey seed missing", NATSConfig{NKeySeedFile: missing}, "nats.nkey_seed_file"},
		{"nkey seed garbage", NATSConfig{NKeySeedFile: writeFile(t, "bad.nk", "not a seed")}, "nats.nkey_seed_file"},
		{"creds missing", NATSConfig{CredsFile: missing}, "nats.creds_file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.cfg.Options()
			assertFieldError(t, err, c.field)
		})
	}
	// A readable creds file yields an option; its content is checked by the server.
	opts, err := NATSConfig{CredsFile: writeFile(t, "u.creds", "x")}.Options()
	if err != nil || len(opts) != 4 {
		t.Errorf("creds file: %d options, err %v; want 4 options", len(opts), err)
	}
}

func TestHTTPToken(t *testing.T) {
	t.Setenv("BALLAST_TEST_API", "a-long-enough-api-token")
	tok, err := HTTPConfig{APITokenEnv: "BALLAST_TEST_API"}.Token()
	if err != nil || tok != "a-long-enough-api-token" {
		t.Errorf("Token() = %q, %v", tok, err)
	}
	// A token from the environment satisfies the rule for non-loopback listens.
	cfg := Config{HTTP: HTTPConfig{Listen: "0.0.0.0:8480", APITokenEnv: "BALLAST_TEST_API"},
		Pools: map[string]PoolConfig{"fixed": {Kind: PoolFixed, Slots: 1}}}.WithDefaults()
	if err := cfg.Validate(); err != nil {
		t.Errorf("token from env refused: %v", err)
	}
	// Unset, it is not a fault of the config (it may be checked where the
	// secret is not provisioned): UnsetSecrets names it, and Token says
	// what to do when a service needs it.
	t.Setenv("BALLAST_TEST_API", "")
	if err := cfg.Validate(); err != nil {
		t.Errorf("with the variable unset: %v; want valid", err)
	}
	if u := cfg.UnsetSecrets(os.Getenv); len(u) != 1 || u[0].Field != "http.api_token_env" {
		t.Errorf("UnsetSecrets = %v, want http.api_token_env", u)
	}
	if _, err := cfg.HTTP.Token(); err == nil || !strings.Contains(err.Error(), "BALLAST_TEST_API is not set") {
		t.Errorf("Token with the variable unset: %v", err)
	}
}
