package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/ballastdev/ballast/internal/config"
)

// The --provider flag, when given, wins over provider.kind, and each
// --exec-* flag over the config's script: one config file serves a
// cluster and a developer's machine.
func TestProviderFlagsWinOverTheConfig(t *testing.T) {
	cfg := config.Config{Provider: config.ProviderConfig{Kind: config.ProviderKubernetes}}
	if got := providerKind("", cfg); got != config.ProviderKubernetes {
		t.Errorf("no flag: %q, want the config's kubernetes", got)
	}
	if got := providerKind("local", cfg); got != "local" {
		t.Errorf("--provider local: %q, want local", got)
	}

	dir := t.TempDir()
	// Each list script names where it came from.
	lister := func(name, id string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho '{\"id\":\""+id+"\",\"pool\":\"spot\",\"state\":\"running\"}'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg.Provider.Exec = config.ExecProviderConfig{Launch: []string{"/bin/false"}, Release: []string{"/bin/true"},
		List: []string{lister("config-list", "from-config")}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		flags execScripts
		want  string
	}{
		{execScripts{}, "from-config"},
		{execScripts{list: lister("flag-list", "from-flag")}, "from-flag"},
	} {
		var st stack
		p, err := newProvider(context.Background(), config.ProviderExec, cfg, "", tc.flags, log, &st)
		if err != nil {
			t.Fatal(err)
		}
		insts, err := p.List(context.Background())
		st.stop()
		if err != nil || len(insts) != 1 || insts[0].ID != tc.want {
			t.Errorf("flags %+v: listed %+v %v, want %s", tc.flags, insts, err, tc.want)
		}
	}
	var st stack
	cfg.Provider.Exec = config.ExecProviderConfig{}
	_, err := newProvider(context.Background(), config.ProviderExec, cfg, "", execScripts{}, log, &st)
	var ue usageError
	if !errors.As(err, &ue) {
		t.Errorf("exec without scripts: %v, want a usage error", err)
	}
	_, err = newProvider(context.Background(), "k8s", cfg, "", execScripts{}, log, &st)
	if !errors.As(err, &ue) {
		t.Errorf("an unknown provider: %v, want a usage error", err)
	}
}
