// Package cli implements the ballast subcommands. Each command takes its
// arguments and writers, so it can be tested without a process.
package cli
