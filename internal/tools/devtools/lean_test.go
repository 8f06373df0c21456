package devtools

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/cli"
)

// TestProductionBinaryLeavesToolsOut: cmd/ballast must not depend on the
// benchmarks or the browser driver, whichever import would bring them
// back in; ballast-tools has them.
func TestProductionBinaryLeavesToolsOut(t *testing.T) {
	deps := func(pkg string) string {
		t.Helper()
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return string(out)
	}
	prod, tools := deps("github.com/ballastdev/ballast/cmd/ballast"), deps("github.com/ballastdev/ballast/cmd/ballast-tools")
	for _, p := range []string{"github.com/chromedp/chromedp", "github.com/ballastdev/ballast/internal/tools/browser", "github.com/ballastdev/ballast/internal/tools/bench"} {
		if strings.Contains(prod, p+"\n") {
			t.Errorf("cmd/ballast depends on %s", p)
		}
		if !strings.Contains(tools, p+"\n") {
			t.Errorf("cmd/ballast-tools lacks %s: is the test still looking at the right packages?", p)
		}
	}
}

func TestToolsJoinBallastsCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := cli.RunWith(context.Background(), []string{"help"}, &out, &errOut, Commands()); code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, w := range []string{"screenshot", "bench-hybrid", "submit", "worker"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("ballast-tools help lacks %s:\n%s", w, out.String())
		}
	}
	out.Reset()
	if code := cli.RunWith(context.Background(), []string{"help", "screenshot"}, &out, &errOut, Commands()); code != 0 || !strings.Contains(out.String(), "--chromium") {
		t.Errorf("help screenshot: exit %d\n%s", code, out.String())
	}
	// The production binary says where a tool went.
	errOut.Reset()
	if code := cli.Run(context.Background(), []string{"bench"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "./cmd/ballast-tools") {
		t.Errorf("ballast bench: exit %d %q", code, errOut.String())
	}
}
