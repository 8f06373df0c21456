package buslink_test

import (
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/buslink"
)

// startAt starts an embedded server on port (0: any) and returns it.
func startAt(t *testing.T, port int) *server.Server {
	t.Helper()
	if port == 0 {
		port = server.RANDOM_PORT
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS not ready within 10 s")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// A real outage of a real server: one line when the connection goes, one
// when it comes back, whatever nats.go tries in between, and the metric's
// total covers the outage.
func TestAnOutageLogsOneDisconnectAndOneReconnect(t *testing.T) {
	t.Parallel()
	s := startAt(t, 0)
	port := s.Addr().(*net.TCPAddr).Port
	var buf testenv.LockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	link, opts := buslink.Watch(log, "test-conn", time.Now)
	nc, err := nats.Connect(s.ClientURL(), append(opts, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	link.Connected(nc)
	if st := link.State(); !st.Up || st.Down != 0 {
		t.Fatalf("state before the outage %+v", st)
	}

	s.Shutdown()
	s.WaitForShutdown()
	testenv.Eventually(t, 5*time.Second, "the disconnect is logged", func() bool { return strings.Count(buf.String(), "NATS connection lost") == 1 })
	if st := link.State(); st.Up || st.Disconnects != 1 {
		t.Fatalf("state during the outage %+v", st)
	}
	outage := 400 * time.Millisecond
	time.Sleep(outage) // the outage itself: many reconnect attempts fail in it

	startAt(t, port)
	testenv.Eventually(t, 10*time.Second, "the reconnect is logged", func() bool { return strings.Count(buf.String(), "NATS connection back") == 1 })
	st := link.State()
	if !st.Up || st.Disconnects != 1 || st.Down < outage {
		t.Fatalf("state after the outage %+v, want up, 1 disconnect, down at least %s", st, outage)
	}
	if n := strings.Count(buf.String(), "NATS connection lost"); n != 1 {
		t.Fatalf("%d disconnect lines, want 1:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "server=nats://127.0.0.1:"+strconv.Itoa(port)) || !strings.Contains(buf.String(), "connection=test-conn") {
		t.Fatalf("the lines do not name the server and the connection:\n%s", buf.String())
	}

	// A close by the process is not an outage.
	nc.Close()
	testenv.Eventually(t, 5*time.Second, "the close is logged", func() bool { return strings.Count(buf.String(), "NATS connection closed") == 1 })
	if n := strings.Count(buf.String(), "NATS connection lost"); n != 1 {
		t.Fatalf("closing logged a disconnect:\n%s", buf.String())
	}
	if st := link.State(); st.Up || st.Disconnects != 1 {
		t.Fatalf("state after close %+v", st)
	}
}

// The clock decides the figures: a down time counts to the reconnect, and
// the current outage counts while it lasts.
func TestTheDownTimeIsCountedOnTheClock(t *testing.T) {
	t.Parallel()
	at := time.Unix(1000, 0)
	now := func() time.Time { return at }
	var buf testenv.LockedBuffer
	link, _ := buslink.Watch(slog.New(slog.NewTextHandler(&buf, nil)), "c", now)
	link.Disconnected(false, nil)
	at = at.Add(3 * time.Second)
	if st := link.State(); st.Up || st.Down != 3*time.Second {
		t.Fatalf("during: %+v", st)
	}
	link.Disconnected(false, nil) // a repeat is not a second outage
	at = at.Add(2 * time.Second)
	link.Reconnected("nats://x:4222")
	at = at.Add(10 * time.Second)
	link.Disconnected(true, nil) // the process closing
	link.Closed(nil)
	if st := link.State(); st.Down != 5*time.Second || st.Disconnects != 1 {
		t.Fatalf("after: %+v, want 5 s down in 1 outage", st)
	}
}
