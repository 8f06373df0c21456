package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
)

// publishDevConfig writes the config of a running `ballast dev` to path
// (config.DevFile), where every other command's discovery finds it, so a
// second terminal needs no export. The file is replaced atomically, so a
// command never reads half of it. The returned func removes it when the
// instance stops, unless another instance has written its own since.
func publishDevConfig(path string, cfg config.Config) (func(), error) {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	b = append([]byte("# Written by a running `ballast dev`, and removed when it stops.\n"), b...)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("dev config: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dev-*.yaml")
	if err != nil {
		return nil, fmt.Errorf("dev config: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := firstErr(werr, cerr, os.Rename(tmp.Name(), path)); err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("dev config: %w", err)
	}
	return func() {
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, b) {
			os.Remove(path)
		}
	}, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// devLogFile is where `ballast dev` writes its structured log by default:
// dev.log in $XDG_STATE_HOME/ballast (~/.local/state/ballast), the XDG
// place for logs that outlive a run; in the instance's own directory when
// there is no home.
func devLogFile(getenv func(string) string, dir string) string {
	base := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			return filepath.Join(dir, "dev.log")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "ballast", "dev.log")
}

// openDevLog starts the log afresh: one file per run keeps it to the
// instance being looked at.
func openDevLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("dev log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("dev log: %w", err)
	}
	return f, nil
}
