package dashboard

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/tools/browser"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
)

// TestPageDrawsNoDataAsAGap: the buckets before Ballast started (no_data)
// are shaded gaps in every chart, not zero waits or zero preemptions, and
// only the buckets after it are drawn as values.
func TestPageDrawsNoDataAsAGap(t *testing.T) {
	t.Parallel()
	b := startBrowser(t)
	api := newFakeAPI(t)
	api.after = func(ov *insight.Overview) {
		for i := range ov.Key.Series {
			ov.Key.Series[i].NoData = i < len(ov.Key.Series)-4
			if ov.Key.Series[i].NoData {
				ov.Key.Series[i].FixedIdle = nil
			}
		}
	}
	if status, err := b.Open(api.srv.URL+"/dashboard", 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("opening the page: %d %v", status, err)
	}
	if err := b.WaitUpdates(1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	n := len(sample(time.Now(), 0).Key.Series)
	got, err := browser.Eval[map[string]string](b, `Object.fromEntries(['chart-preempt', 'chart-wait', 'chart-idle'].flatMap((id) => {
		const s = document.getElementById(id);
		return [[id + '.points', s.dataset.points], [id + '.gaps', s.dataset.gaps], [id + '.bands', String(s.querySelectorAll('rect.gap').length)]];
	}))`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	gaps := func(c string) int { g, _ := strconv.Atoi(got[c+".gaps"]); return g }
	if got["chart-preempt.points"] != "4" || gaps("chart-preempt") != n-4 || got["chart-preempt.bands"] != "1" {
		t.Errorf("preemptions: %v, want 4 points and %d buckets in one gap band", got, n-4)
	}
	if gaps("chart-wait") < n-4 {
		t.Errorf("wait: %v, want at least the %d buckets before the start as gaps", got, n-4)
	}
	if got["chart-idle.bands"] == "0" {
		t.Errorf("idle: %v, want gap bands", got)
	}
}
