package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkFile writes doc to a config file of mode perm and runs Check on it.
func checkFile(t *testing.T, doc string, perm os.FileMode) (Problems, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ballast.yaml")
	if err := os.WriteFile(path, []byte(doc), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
	_, warnings, err := Check(path, os.Getenv)
	return warnings, err
}

func warningAt(ws Problems, field, fragment string) bool {
	for _, w := range ws {
		if w.Field == field && strings.Contains(w.Message, fragment) && w.Line > 0 {
			return true
		}
	}
	return false
}

func TestRunAsSyntaxIsChecked(t *testing.T) {
	for _, c := range []struct{ doc, field, msg string }{
		{"worker: {run_as: root}\n", "worker.run_as", "unprivileged"},
		{"worker: {run_as: \"0:0\"}\n", "worker.run_as", "root"},
		{"worker: {run_as: \"bad user\"}\n", "worker.run_as", "neither a user name nor UID:GID"},
		{"templates:\n  t: {command: [x], run_as: \"1500:\"}\n", "templates.t.run_as", "UID:GID"},
		{"templates:\n  t: {handler: h, run_as: nobody}\n", "templates.t.run_as", "runs inside the worker"},
	} {
		_, err := Parse([]byte(c.doc+fixedPool), "f.yaml")
		if err == nil || !strings.Contains(err.Error(), c.field+": ") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v; want a problem at %s saying %q", c.doc, err, c.field, c.msg)
		}
	}
	cfg, err := Parse([]byte("worker: {run_as: nobody}\ntemplates:\n  t: {command: [x], run_as: \"1500:1500\"}\n"+fixedPool), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Worker.RunAs != "nobody" || cfg.TemplateRunAs()["t"] != "1500:1500" || len(cfg.TemplateRunAs()) != 1 {
		t.Errorf("run_as = %q, templates %v", cfg.Worker.RunAs, cfg.TemplateRunAs())
	}
}

func TestCheckWarnsWhenJobsCanReachCredentials(t *testing.T) {
	secret := writeFile(t, "redis.pw", "s3cret\n")
	creds := "redis: {password_file: " + secret + "}\ntemplates:\n  t: {command: [x]}\n" + fixedPool
	ws, err := checkFile(t, creds, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if !warningAt(ws, "worker.run_as", "redis.password") {
		t.Errorf("credentials without run_as: no warning at worker.run_as in\n%v", ws)
	}
	ws, err = checkFile(t, "worker: {run_as: nobody}\n"+creds, 0o600)
	if err != nil || len(ws) != 0 {
		t.Errorf("with run_as nobody: %v, %v; want no warning", ws, err)
	}
	ws, _ = checkFile(t, "worker: {run_as: no-such-user-ballast}\n"+creds, 0o600)
	if !warningAt(ws, "worker.run_as", `no user "no-such-user-ballast"`) {
		t.Errorf("unknown user: no warning naming it in\n%v", ws)
	}
	ws, _ = checkFile(t, "worker: {run_as: nobody}\ntemplates:\n  u: {command: [x], run_as: no-such-user-ballast}\n"+fixedPool, 0o600)
	if !warningAt(ws, "templates.u.run_as", "refuses to start") {
		t.Errorf("unknown template user: no warning in\n%v", ws)
	}
}

func TestCheckWarnsAboutOpenSecretFiles(t *testing.T) {
	open := writeFile(t, "token", "a-token-of-thirty-two-characters\n")
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := checkFile(t, "worker: {run_as: nobody}\nhttp: {api_token_file: "+open+"}\nnats: {token_file: /nonexistent/ballast-token}\n"+fixedPool, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if !warningAt(ws, "http.api_token_file", "readable by every user (mode 0644)") {
		t.Errorf("no warning for a world-readable token file in\n%v", ws)
	}
	if !warningAt(ws, "nats.token_file", "cannot be read here") {
		t.Errorf("no warning for a missing token file in\n%v", ws)
	}
	// A secret written in a config file others can read.
	ws, _ = checkFile(t, "worker: {run_as: nobody}\nredis: {password: s3cret}\n"+fixedPool, 0o640)
	if !warningAt(ws, "redis.password", "password_file") {
		t.Errorf("no warning for an inline password in a group-readable config in\n%v", ws)
	}
	if ws, _ := checkFile(t, "worker: {run_as: nobody}\nredis: {password: s3cret}\n"+fixedPool, 0o600); len(ws) != 0 {
		t.Errorf("inline password in a private config: %v, want no warning", ws)
	}
}

func TestSecretFiles(t *testing.T) {
	tok := writeFile(t, "tok", "nats-token\n")
	pw := writeFile(t, "pw", "nats-password\r\n")
	api := writeFile(t, "api", "a-token-of-thirty-two-characters\n")
	if got, err := (HTTPConfig{APITokenFile: api}).Token(); err != nil || got != "a-token-of-thirty-two-characters" {
		t.Errorf("api_token_file: %q, %v", got, err)
	}
	if _, err := (NATSConfig{TokenFile: tok}).Options(); err != nil {
		t.Errorf("token_file: %v", err)
	}
	if _, err := (NATSConfig{User: "u", PasswordFile: pw}).Options(); err != nil {
		t.Errorf("password_file: %v", err)
	}
	for _, c := range []struct {
		err   error
		field string
	}{
		{second(NATSConfig{TokenFile: "/nonexistent/t"}.Options()), "nats.token_file"},
		{second(NATSConfig{User: "u", PasswordFile: "/nonexistent/p"}.Options()), "nats.password_file"},
		{second(HTTPConfig{APITokenFile: "/nonexistent/a"}.Token()), "http.api_token_file"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.field) {
			t.Errorf("unreadable %s: %v, want the field named", c.field, c.err)
		}
	}
	_, err := Parse([]byte("nats: {token: x, token_file: "+tok+"}\nhttp: {api_token_env: A, api_token_file: "+api+"}\n"+fixedPool), "f.yaml")
	for _, f := range []string{"nats.token", "http.api_token"} {
		if !hasField(err, f) {
			t.Errorf("two forms of %s accepted: %v", f, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }
