package telemetry

import (
	"io"
	"log/slog"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ballastdev/ballast/orchestrator/control/buslink"
)

// The link's state reaches the scrape: up, down time and outages, under
// the names the README's alert examples use.
func TestWatchBusExportsTheLinkState(t *testing.T) {
	m := newTest(t, Options{})
	at := time.Unix(5000, 0)
	link, _ := buslink.Watch(slog.New(slog.NewTextHandler(io.Discard, nil)), "c", func() time.Time { return at })
	if err := m.WatchBus(link); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m)
	wantType(t, fams, "ballast_nats_connected", dto.MetricType_GAUGE)
	wantType(t, fams, "ballast_nats_disconnected_seconds_total", dto.MetricType_COUNTER)
	wantValue(t, fams, "ballast_nats_connected", nil, 1)
	wantValue(t, fams, "ballast_nats_disconnected_seconds_total", nil, 0)

	link.Disconnected(false, nil)
	at = at.Add(15 * time.Second)
	fams = scrape(t, m)
	wantValue(t, fams, "ballast_nats_connected", nil, 0)
	wantValue(t, fams, "ballast_nats_disconnected_seconds_total", nil, 15)
	wantValue(t, fams, "ballast_nats_disconnects_total", nil, 1)
	link.Reconnected("nats://127.0.0.1:4222")
	wantValue(t, scrape(t, m), "ballast_nats_connected", nil, 1)
}
