package cli

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestDevTerminalDropsOnlyDurabilityWarnings: on the embedded Redis the
// terminal leaves out the controller's durability warnings, and nothing
// else, however the logger was derived.
func TestDevTerminalDropsOnlyDurabilityWarnings(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(withoutDurability{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})}).With("component", "controller")
	log.Warn("redis: CONFIG GET appendonly refused", "durable", false)
	log.WithGroup("g").Warn("redis: appendonly no", "durable", false)
	log.Warn("pipeline run missed its deadline", "pipeline", "features")
	log.Info("not a warning")
	got := buf.String()
	if strings.Contains(got, "redis:") {
		t.Errorf("a durability warning reached the terminal:\n%s", got)
	}
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "pipeline run missed its deadline") || !strings.Contains(got, "component=controller") {
		t.Errorf("terminal log:\n%s\nwant the other warning, with its attributes, and nothing else", got)
	}
}
