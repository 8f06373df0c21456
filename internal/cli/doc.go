// Package cli implements the ballast subcommands. Each command takes its
// arguments and writers, so it can be tested without a process. Config
// discovery, help, suggestions and exit statuses are shared by every
// command; another binary adds its own commands with RunWith (see
// cmd/ballast-tools).
package cli
