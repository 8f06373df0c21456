package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/workers"
)

// shippedNATSConf is the least-privilege server config in deploy/.
const shippedNATSConf = "../../deploy/nats/ballast.conf"

// permConn is one user's connection and the asynchronous errors the
// server sent it (a refused publish or subscription arrives that way).
type permConn struct {
	nc   *nats.Conn
	errs chan error
}

// waitPermissionError waits for the server to refuse something naming
// subject, failing after a deadline.
func (c permConn) waitPermissionError(t *testing.T, subject string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case err := <-c.errs:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), subject) {
				return
			}
			t.Logf("other async error: %v", err)
		case <-deadline:
			t.Fatalf("no permissions violation for %s within 5s", subject)
		}
	}
}

// startShippedNATS runs nats-server on the shipped config, changing only
// what a test must: a random loopback port and a temporary store.
func startShippedNATS(t *testing.T) *server.Server {
	t.Helper()
	for _, u := range []string{"SUBMITTER", "WORKER", "CONTROLLER"} {
		t.Setenv("BALLAST_NATS_"+u+"_PASSWORD", "pw-"+strings.ToLower(u))
	}
	opts, err := server.ProcessConfigFile(shippedNATSConf)
	if err != nil {
		t.Fatalf("%s: %v", shippedNATSConf, err)
	}
	opts.Host, opts.Port, opts.StoreDir = "127.0.0.1", server.RANDOM_PORT, t.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("nats-server not ready within 10s")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// connectAs connects as user with the options Ballast builds from its own
// config (nats.user, nats.password_env, nats.inbox_prefix).
func connectAs(t *testing.T, s *server.Server, user string) permConn {
	t.Helper()
	cfg := config.NATSConfig{URL: s.ClientURL(), User: user,
		PasswordEnv: "BALLAST_NATS_" + strings.ToUpper(user) + "_PASSWORD", InboxPrefix: "_INBOX_" + user}
	opts, err := cfg.Options()
	if err != nil {
		t.Fatal(err)
	}
	c := permConn{errs: make(chan error, 16)}
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case c.errs <- err:
		default:
		}
	}))
	if c.nc, err = nats.Connect(cfg.URL, opts...); err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(c.nc.Close)
	return c
}

// TestShippedNATSConfigIsLeastPrivilege: with deploy/nats/ballast.conf, a
// submitter can submit and read its reply but cannot wake a worker nor read
// another user's replies; a worker receives the controller's wake-ups; the
// controller can create its event stream.
func TestShippedNATSConfigIsLeastPrivilege(t *testing.T) {
	s := startShippedNATS(t)
	subj := events.Subjects{Prefix: "ballast"}
	ctl, wrk, sub := connectAs(t, s, "controller"), connectAs(t, s, "worker"), connectAs(t, s, "submitter")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// The controller's JetStream calls fit its $JS.API allowances.
	js, err := jetstream.New(ctl.nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventbus.EnsureStream(ctx, js, "BALLAST_EVENTS", subj, time.Hour); err != nil {
		t.Fatalf("controller cannot create its stream: %v", err)
	}

	// The intake answers submissions and status requests (which
	// `submit --wait` polls) on the requester's inbox (allow_responses).
	for _, subject := range []string{subj.Submit(), subj.JobStatus()} {
		replies := make(chan string, 1)
		if _, err := ctl.nc.Subscribe(subject, func(m *nats.Msg) {
			replies <- m.Reply
			_ = m.Respond([]byte(`{"ok":true}`))
		}); err != nil {
			t.Fatal(err)
		}
		if err := ctl.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		m, err := sub.nc.RequestWithContext(ctx, subject, []byte(`{}`))
		if err != nil {
			t.Fatalf("submitter cannot request on %s: %v", subject, err)
		}
		if string(m.Data) != `{"ok":true}` {
			t.Fatalf("reply %q", m.Data)
		}
		if r := <-replies; !strings.HasPrefix(r, "_INBOX_submitter.") {
			t.Fatalf("the submitter's request on %s asked for a reply on %q, not its own inbox prefix", subject, r)
		}
	}

	// A worker receives control wake-ups from the controller.
	woken := make(chan workers.ControlMessage, 4)
	if _, err := wrk.nc.Subscribe(subj.Control("w1"), func(m *nats.Msg) {
		var cm workers.ControlMessage
		_ = json.Unmarshal(m.Data, &cm)
		woken <- cm
	}); err != nil {
		t.Fatal(err)
	}
	if err := wrk.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	// The submitter's forged wake-up is refused and never delivered.
	if err := workers.NotifyControl(sub.nc, subj, "w1", workers.ControlMessage{Action: workers.ControlDrain}); err != nil {
		t.Fatal(err) // buffered by nats.go; the refusal comes back asynchronously
	}
	sub.waitPermissionError(t, subj.Control("w1"))
	real := workers.ControlMessage{Action: workers.ControlCancel, JobID: "j1", Attempt: 1}
	if err := workers.NotifyControl(ctl.nc, subj, "w1", real); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-woken:
		// The forged drain, had it passed, would have arrived first: the
		// server handled it before it answered the submitter.
		if got != real {
			t.Fatalf("worker got %+v first, want the controller's %+v", got, real)
		}
	case <-ctx.Done():
		t.Fatal("worker did not receive the controller's wake-up")
	}

	// A worker's events reach the stream, and the controller reads a job's
	// history back through its consumer allowances.
	ev := events.Event{ID: events.NewID(), Type: events.TypeJobRunning, JobID: "j1", Attempt: 1, Worker: "w1", Time: time.Now()}
	if err := eventbus.NewNATSPublisher(wrk.nc, subj).Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	var hist []events.Event
	testenv.Eventually(t, 5*time.Second, "the worker's event in the controller's history", func() bool {
		hist, err = eventbus.History(ctx, js, "BALLAST_EVENTS", subj, "j1")
		return err == nil && len(hist) == 1
	})
	if hist[0].ID != ev.ID {
		t.Fatalf("history %+v, want the worker's event %s", hist, ev.ID)
	}

	// Nor may the submitter read other users' replies.
	for _, other := range []string{"_INBOX_controller.>", "_INBOX.>"} {
		if _, err := sub.nc.Subscribe(other, func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
		sub.waitPermissionError(t, other)
	}
}
