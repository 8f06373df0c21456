package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/trace"
)

func TestTraceSimulateAndPlanOnASyntheticMonth(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "month.csv")
	code, _, errOut := run(t, "trace", "--synthetic", "400", "--seed", "7", "--out", csv)
	if code != 0 {
		t.Fatalf("trace: code %d: %s", code, errOut)
	}
	f, err := os.Open(csv)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadCSV(f, csv)
	f.Close()
	if err != nil || len(tr.Jobs) < 300 {
		t.Fatalf("the written trace reads back as %d jobs: %v", len(tr.Jobs), err)
	}

	code, out, errOut := run(t, "simulate", "--trace", csv, "--elastic-max", "50", "--quota", "8")
	if code != 0 {
		t.Fatalf("simulate: code %d: %s", code, errOut)
	}
	for _, want := range []string{"all fixed (peak)", "all elastic", "hybrid 70/40", "hybrid tuned", "quota 8 slots"} {
		if !strings.Contains(out, want) {
			t.Errorf("simulate output lacks %q:\n%s", want, out)
		}
	}

	html := filepath.Join(dir, "plan.html")
	code, out, errOut = run(t, "plan", "--trace", csv, "--elastic-max", "50", "--html", html, "--tune-days", "7")
	if code != 0 {
		t.Fatalf("plan: code %d: %s", code, errOut)
	}
	for _, want := range []string{"rule of thumb", "cost-optimal", "simulated", "TEMPLATE"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(html)
	if err != nil || strings.Count(string(b), "<svg") != 3 {
		t.Fatalf("the HTML report: %d charts, err %v", strings.Count(string(b), "<svg"), err)
	}

	if code, _, errOut := run(t, "simulate", "--trace", csv, "--synthetic", "10"); code != 2 || !strings.Contains(errOut, "exactly one trace") {
		t.Fatalf("two trace sources: code %d: %s", code, errOut)
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("submit_s,duration_s,slots,class,team,template,checkpointable,deadline_s\n1,0,1,core,a,b,false,\n"), 0o600)
	if code, _, errOut := run(t, "simulate", "--trace", bad); code != 1 || !strings.Contains(errOut, "line 2") {
		t.Fatalf("a bad trace: code %d: %s", code, errOut)
	}
}
