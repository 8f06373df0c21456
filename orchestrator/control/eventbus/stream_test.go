package eventbus_test

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
)

func TestEnsureStreamIsIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // created once here
	for _, maxAge := range []time.Duration{time.Hour, time.Hour, 30 * time.Second} {
		if err := eventbus.EnsureStream(ctxT(t), e.js, streamName, e.subj, maxAge); err != nil {
			t.Fatalf("maxAge %s: %v", maxAge, err)
		}
	}
	s, err := e.js.Stream(ctxT(t), streamName)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	if len(cfg.Subjects) != 1 || cfg.Subjects[0] != "bt.events.>" {
		t.Errorf("subjects %v", cfg.Subjects)
	}
	if cfg.MaxAge != 30*time.Second || cfg.Duplicates != 30*time.Second {
		t.Errorf("max age %s, duplicates %s: want both 30s (the window cannot outlast the events)", cfg.MaxAge, cfg.Duplicates)
	}
	if err := eventbus.EnsureStream(ctxT(t), e.js, streamName, e.subj, -time.Second); err == nil {
		t.Error("negative max age: no error")
	}
	if err := eventbus.EnsureStream(ctxT(t), e.js, streamName, events.Subjects{Prefix: "a.*"}, time.Hour); err == nil {
		t.Error("wildcard prefix: no error")
	}
}

func TestEnsureStreamDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := eventbus.EnsureStream(ctxT(t), e.js, "OTHER", events.Subjects{Prefix: "other"}, 0); err != nil {
		t.Fatal(err)
	}
	s, err := e.js.Stream(ctxT(t), "OTHER")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	if cfg.Duplicates != eventbus.DuplicateWindow || cfg.MaxAge != 0 || cfg.Storage.String() != "File" {
		t.Errorf("duplicates %s, max age %s, storage %s", cfg.Duplicates, cfg.MaxAge, cfg.Storage)
	}
}
