// Package config owns Ballast's configuration file: its shape (Config and the
// section types), its defaults (WithDefaults), its validation (Validate, which
// reports every problem by field path), loading with file:line:column for each
// problem (Load, Parse, Problems), the embedded configuration of `ballast dev`
// (Dev), and the builders that turn the Redis and NATS sections into client
// options, resolving secrets from the environment or files at connect time.
//
// It does not connect to anything itself: adapters take the options it builds.
package config
