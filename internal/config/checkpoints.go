package config

import (
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/workers/checkpoint/storespec"
)

// CheckpointsConfig makes checkpoints travel: with a store, each checkpoint
// a job reports is uploaded from its worker's checkpoint directory and
// restored into the directory of whichever worker runs its next attempt.
// Without one, checkpoints stay on the worker that wrote them (only the
// token travels), as they always did.
type CheckpointsConfig struct {
	// Store is the object store's URL: s3://BUCKET/PREFIX?region=R (an
	// S3-compatible server adds &endpoint=URL), gs://BUCKET/PREFIX,
	// azblob://CONTAINER/PREFIX or file:///ABSOLUTE/PATH. Credentials come
	// from each cloud SDK's usual chain on the worker (environment,
	// shared config files, instance or workload identity), never from the
	// URL nor from a job.
	Store string `yaml:"store,omitempty"`
	// Keep is how many committed checkpoints of each job are kept (default
	// 3): a restore that finds the newest one corrupt falls back to the
	// one before.
	Keep int `yaml:"keep,omitempty"`
	// ChunkSize is the size of the content-addressed pieces files are cut
	// into (default 8MiB): an unchanged piece is never uploaded again.
	ChunkSize jobs.ByteSize `yaml:"chunk_size,omitempty"`
	// Concurrency bounds the pieces in flight to or from the store per
	// upload or restore (default 8); memory is about that many chunks.
	Concurrency int `yaml:"concurrency,omitempty"`
	// Grace is how old an object no kept checkpoint names must be before
	// it is deleted (default 24h). An upload that runs longer than half
	// of it commits nothing, so no upload in flight can lose a piece.
	Grace jobs.Duration `yaml:"grace,omitempty"`
}

// Bounds of the checkpoints section.
const (
	maxCheckpointKeep        = 100
	minCheckpointChunk       = 64 << 10
	maxCheckpointChunk       = 1 << 30
	maxCheckpointConcurrency = 256
	minCheckpointGrace       = 10 * time.Minute
)

// Enabled reports whether checkpoints travel through a store.
func (c CheckpointsConfig) Enabled() bool { return c.Store != "" }

// withDefaults fills in the tuning of a configured store; without a store
// the section stays empty, so a config that never mentions it reads back
// as it was written.
func (c CheckpointsConfig) withDefaults() CheckpointsConfig {
	if !c.Enabled() {
		return c
	}
	setDefault(&c.Keep, storespec.DefaultKeep)
	setDefault(&c.ChunkSize, jobs.ByteSize(storespec.DefaultChunkSize))
	setDefault(&c.Concurrency, storespec.DefaultConcurrency)
	setDefault(&c.Grace, jobs.Duration(storespec.DefaultGrace))
	return c
}

func (c CheckpointsConfig) validate(ps *problems) {
	if !c.Enabled() {
		// Tuning without a store would do nothing: say so rather than
		// let an operator believe checkpoints travel.
		if c.Keep != 0 || c.ChunkSize != 0 || c.Concurrency != 0 || c.Grace != 0 {
			ps.add("checkpoints.store", "missing, but the checkpoints section sets other fields: give the store's URL (s3://BUCKET/PREFIX?region=R, gs://BUCKET/PREFIX, azblob://CONTAINER/PREFIX or file:///PATH), or remove the section to keep checkpoints on each worker")
		}
		return
	}
	if u, err := url.Parse(c.Store); err == nil && u.User != nil {
		ps.add("checkpoints.store", "the URL holds user information: credentials come from the cloud SDK's usual chain on each worker (environment, shared config files, instance identity), never from the config; remove it")
	} else if err := storespec.Validate(c.Store); err != nil {
		ps.add("checkpoints.store", "%v", err)
	}
	if c.Keep < 1 || c.Keep > maxCheckpointKeep {
		ps.add("checkpoints.keep", "%d is out of range: keep 1 to %d checkpoints per job (default %d; 2 or more lets a restore fall back over a corrupt one)", c.Keep, maxCheckpointKeep, storespec.DefaultKeep)
	}
	if c.ChunkSize < minCheckpointChunk || c.ChunkSize > maxCheckpointChunk {
		ps.add("checkpoints.chunk_size", "%s is out of range: use 64KiB to 1GiB (default 8MiB)", c.ChunkSize)
	}
	if c.Concurrency < 1 || c.Concurrency > maxCheckpointConcurrency {
		ps.add("checkpoints.concurrency", "%d is out of range: 1 to %d chunks in flight (default %d)", c.Concurrency, maxCheckpointConcurrency, storespec.DefaultConcurrency)
	}
	if c.Grace.Std() < minCheckpointGrace {
		ps.add("checkpoints.grace", "%s is too short: an upload may run for half of it, and clock skew between workers and the store eats into it; use at least %s (default 24h)", c.Grace, jobs.Duration(minCheckpointGrace))
	}
}

// storeCredentialEnv are the variables through which the cloud SDKs find
// a checkpoint store's credentials on a worker. With a store configured
// they are the worker's credentials, which no job may see.
var storeCredentialEnv = []string{
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SHARED_CREDENTIALS_FILE",
	"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
	"GOOGLE_APPLICATION_CREDENTIALS",
	"AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_CLIENT_SECRET",
	"AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_FEDERATED_TOKEN_FILE",
}

// validateStorePassEnv refuses templates that would pass the checkpoint
// store's credentials on to their jobs.
func (c Config) validateStorePassEnv(ps *problems) {
	if !c.Checkpoints.Enabled() {
		return
	}
	for _, name := range sortedNames(c.Templates) {
		for i, env := range c.Templates[name].PassEnv {
			if slices.Contains(storeCredentialEnv, env) {
				ps.add(fmt.Sprintf("templates.%s.pass_env[%d]", name, i),
					"%s is how workers find the checkpoint store's credentials (checkpoints.store); jobs never see them: drop it, or give the job its own credential in env", env)
			}
		}
	}
}
