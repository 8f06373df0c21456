package config

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/workers/runas"
)

// Check is Load for `ballast validate-config`: it also returns warnings,
// things that are not wrong with the file but will stop a service on this
// machine (credentials named by environment variables that are not set
// here, secret files it cannot read, run_as users it does not have) or
// let jobs reach the credentials (secret files or a config holding
// secrets that other users can read, no run_as), each with its position
// like a problem.
func Check(path string, getenv func(string) string) (Config, Problems, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, nil, fmt.Errorf("config: %w", err)
	}
	cfg, err := Parse(data, path)
	if err != nil {
		return Config{}, nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return cfg, nil, nil // Parse read it; this cannot fail
	}
	root := documentRoot(&doc)
	var warnings Problems
	found := cfg.UnsetSecrets(getenv)
	found = append(found, cfg.secretFileWarnings(os.Stat)...)
	found = append(found, cfg.inlineSecretWarnings(path, os.Stat)...)
	found = append(found, cfg.runAsWarnings(runas.Lookup)...)
	found = append(found, cfg.sharesWarnings()...)
	for _, fe := range found {
		line, col := locate(root, fe.Field)
		warnings = append(warnings, &Problem{File: path, Line: line, Column: col, Field: fe.Field, Message: fe.Message, Err: fe})
	}
	warnings.sortByPosition()
	return cfg, warnings, nil
}
