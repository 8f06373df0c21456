package config

import (
	"os"
	"path/filepath"
)

// Where Discover looks, in order, when no --config is given.
const (
	// EnvConfig names the config file for every command of a shell.
	EnvConfig = "BALLAST_CONFIG"
	// LocalFile is the config of the directory a command runs in.
	LocalFile = "ballast.yaml"
)

// Found says which config file Discover chose, and why.
type Found struct {
	// Path is the file; empty when none was found and the built-in
	// defaults apply.
	Path string
	// Source names the rule that chose it: "--config", "$BALLAST_CONFIG",
	// "./ballast.yaml", "user config", "ballast dev" or "" for none.
	Source string
}

// Discover finds the config file a command should read: the --config flag
// (explicit, when not empty), then $BALLAST_CONFIG, then ./ballast.yaml,
// then the user's UserConfigFile, then the file of a running `ballast dev`
// (DevFile), so a second terminal reaches a dev instance without an export.
// An explicit choice is returned whether or not the file exists, so that a
// typo is an error rather than a silent fall back to defaults; the other
// places count only when a file is there. getenv is os.Getenv in
// production.
func Discover(explicit string, getenv func(string) string) Found {
	if explicit != "" {
		return Found{explicit, "--config"}
	}
	if p := getenv(EnvConfig); p != "" {
		return Found{p, "$" + EnvConfig}
	}
	for _, c := range []Found{
		{LocalFile, "./" + LocalFile},
		{UserConfigFile(getenv), "user config"},
		{DevFile(getenv), "ballast dev"},
	} {
		if c.Path == "" {
			continue
		}
		if fi, err := os.Stat(c.Path); err == nil && fi.Mode().IsRegular() {
			return c
		}
	}
	return Found{}
}

// ConfigDir is Ballast's directory under the XDG base directory for
// configuration: $XDG_CONFIG_HOME/ballast, or ~/.config/ballast when that
// is unset or relative (as the XDG specification says to treat it). It is
// "" when neither can be told.
func ConfigDir(getenv func(string) string) string {
	base := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "ballast")
}

// UserConfigFile is the user's own config: config.yaml in ConfigDir.
func UserConfigFile(getenv func(string) string) string {
	return inConfigDir(getenv, "config.yaml")
}

// DevFile is where `ballast dev` writes the config of the instance it runs
// (dev.yaml in ConfigDir), and removes it on exit. It comes after the
// user's own config in Discover: a config someone wrote wins over one a
// dev instance left.
func DevFile(getenv func(string) string) string {
	return inConfigDir(getenv, "dev.yaml")
}

func inConfigDir(getenv func(string) string, name string) string {
	d := ConfigDir(getenv)
	if d == "" {
		return ""
	}
	return filepath.Join(d, name)
}
