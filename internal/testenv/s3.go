package testenv

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3 starts an S3-compatible server in this process, in memory, on a
// loopback listener, for the test's life, and returns the checkpoint
// store URL of a bucket on it (config checkpoints.store). wrap, when not
// nil, sits in front of the server: a test slows or breaks requests there.
func S3(t testing.TB, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	backend := s3mem.New()
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()), gofakes3.WithTimeSkewLimit(0))
	h := faker.Server()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if err := backend.CreateBucket("ballast"); err != nil {
		t.Fatal(err)
	}
	// anonymous: the fake server checks no signature, and the SDK's
	// default chain would look for credentials the machine may not have.
	return "s3://ballast/checkpoints?region=us-east-1&anonymous=true&endpoint=" + url.QueryEscape(srv.URL)
}
