package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// natsAt starts a JetStream server on port (0: any) keeping its store in
// dir, so that a server started again on the same port and dir is the same
// server to its clients, stream included.
func natsAt(t *testing.T, port int, dir string) *server.Server {
	t.Helper()
	if port == 0 {
		port = server.RANDOM_PORT
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS not ready within 10 s")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// natsOutage is how long TestANATSOutageIsLoggedOncePerProcess keeps NATS
// down: 3 s, or BALLAST_E2E_NATS_OUTAGE (a Go duration, such as 15s, the
// outage the issue measures).
func natsOutage(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("BALLAST_E2E_NATS_OUTAGE")
	if v == "" {
		return 3 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("BALLAST_E2E_NATS_OUTAGE=%q is not a positive duration", v)
	}
	return d
}

// TestANATSOutageIsLoggedOncePerProcess: a controller and a worker process
// live through an outage of their NATS server (stopped, then started again
// on its port), and each logs exactly one line when its connection goes and
// one when it is back, naming the server. Before, neither said anything.
func TestANATSOutageIsLoggedOncePerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	t.Parallel()
	bin := ballastBinary(t)
	_, ns := testenv.Redis(t)
	store := t.TempDir()
	srv := natsAt(t, 0, store)
	port := srv.Addr().(*net.TCPAddr).Port

	dir := t.TempDir()
	cfg := config.Dev()
	cfg.Namespace = ns
	cfg.Redis.Addr = testenv.RedisAddr()
	cfg.NATS.URL = srv.ClientURL()
	cfg.NATS.SubjectPrefix = ns
	cfg.NATS.Stream = "E" + ns
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.Worker.LogDir = filepath.Join(dir, "logs")
	cfg.Worker.CheckpointDir = filepath.Join(dir, "checkpoints")
	cfg.Worker.PollInterval = jobs.Duration(50 * time.Millisecond)
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "ballast.yaml")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	procs := map[string]*child{
		"controller": startChild(t, bin, filepath.Join(dir, "ctl.log"), "controller", "--config", cfgPath, "--provider", "none"),
		"worker":     startWorkerProc(t, bin, cfgPath, "worker"),
	}
	testenv.Eventually(t, 30*time.Second, "the controller is running", func() bool {
		return strings.Contains(procs["controller"].log(), "controller running")
	})
	// The worker is up once it has registered: the controller's view of
	// it is not needed, only its own connection.
	time.Sleep(time.Second)

	srv.Shutdown()
	srv.WaitForShutdown()
	for name, c := range procs {
		testenv.Eventually(t, 10*time.Second, name+" logs the disconnect", func() bool {
			return strings.Contains(c.log(), "NATS connection lost")
		})
	}
	outage := natsOutage(t)
	time.Sleep(outage) // the outage: many reconnect attempts fail in it
	natsAt(t, port, store)
	for name, c := range procs {
		testenv.Eventually(t, 20*time.Second, name+" logs the reconnect", func() bool {
			return strings.Contains(c.log(), "NATS connection back")
		})
	}
	t.Logf("NATS was down %s", outage)
	for name, c := range procs {
		out := c.log()
		if lost, back := strings.Count(out, "NATS connection lost"), strings.Count(out, "NATS connection back"); lost != 1 || back != 1 {
			t.Errorf("%s logged %d disconnects and %d reconnects, want 1 and 1:\n%s", name, lost, back, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "NATS connection") {
				t.Logf("%s: %s", name, line)
			}
		}
		if !strings.Contains(out, "127.0.0.1:") || c.exited() {
			t.Errorf("%s: the lines do not name the server, or it exited:\n%s", name, out)
		}
	}
}
