package config

import (
	_ "embed" // for the dev config
	"fmt"
)

//go:embed dev.yaml
var devYAML []byte

// Dev returns the configuration of `ballast dev`, defaulted and validated.
// It panics only if the embedded file itself is broken, which a test guards
// against; nothing a user supplies reaches it.
func Dev() Config {
	cfg, err := Parse(devYAML, "dev.yaml")
	if err != nil {
		panic(fmt.Sprintf("config: the embedded dev config is broken:\n%v", err))
	}
	return cfg
}
