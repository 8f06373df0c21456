package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
)

// maxReplyBytes bounds what is read of a reply: a receipt is small, a
// batch of jobs.MaxBatchJobs receipts about 1.1 MB, and an
// unexpected page from a proxy need not be read whole.
const maxReplyBytes = 4 << 20

// HTTP submits jobs with POST BASEURL/api/v1/jobs, and sweeps with POST
// BASEURL/api/v1/sweeps.
type HTTP struct {
	base  string
	token string
	hc    *http.Client
	// Options tunes retries; set it before the first Submit.
	Options Options
}

// NewHTTP returns a client for the Ballast API at baseURL (scheme, host and
// any path prefix, e.g. "http://controller:8080"). token is sent as a bearer
// token unless empty. A nil hc means http.DefaultClient; each try is bounded
// by Options.Timeout, not by hc.Timeout.
func NewHTTP(baseURL, token string, hc *http.Client) *HTTP {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &HTTP{base: strings.TrimRight(baseURL, "/"), token: token, hc: hc}
}

// Submit sends s and returns the receipt, retrying as Options say.
func (c *HTTP) Submit(ctx context.Context, s jobs.Submission) (intake.Receipt, error) {
	if c == nil || c.base == "" {
		return intake.Receipt{}, errors.New("client.Submit: no base URL")
	}
	return submit(ctx, c.Options.WithDefaults(), jobKind, s, httpTry(c, jobKind))
}

// SubmitSweep sends spec with POST BASEURL/api/v1/sweeps and returns the
// sweep's receipt, retrying as Options say. A spec without an idempotency
// key gets a random one, as in Submit.
func (c *HTTP) SubmitSweep(ctx context.Context, spec sweep.Spec) (intake.SweepReceipt, error) {
	if c == nil || c.base == "" {
		return intake.SweepReceipt{}, errors.New("client.SubmitSweep: no base URL")
	}
	return submit(ctx, c.Options.WithDefaults(), sweepKind, spec, httpTry(c, sweepKind))
}

// httpTry sends one request of kind k through c.
func httpTry[V, R any](c *HTTP, k kind[V, R]) tryFunc[R] {
	return func(ctx context.Context, body []byte) (R, error) {
		var zero R
		url := c.base + k.path
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return zero, fmt.Errorf("POST %s: %w", url, err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := c.hc.Do(req)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return zero, fmt.Errorf("%w at %s: start `ballast controller` or `ballast dev`, or check the address (%w)", ErrNoIntake, c.base, err)
		}
		if err != nil {
			return zero, fmt.Errorf("POST %s: %w", url, err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
		if err != nil {
			return zero, fmt.Errorf("POST %s: reading the reply: %w", url, err)
		}
		r, err := decodeReply(data, resp.StatusCode, k)
		var ce *Error
		switch {
		case errors.As(err, &ce):
			return zero, err
		case err != nil:
			// Not the intake speaking: a proxy, a load balancer or the wrong
			// address. The status still says whether to try again.
			return zero, statusError(resp.StatusCode, url, data)
		case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated:
			return zero, statusError(resp.StatusCode, url, data)
		}
		return r, nil
	}
}

// statusError classifies a reply that is not in the intake's wire format.
func statusError(status int, url string, data []byte) *Error {
	code := intake.CodeInternal
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		code = intake.CodeUnavailable
	case http.StatusUnauthorized, http.StatusForbidden:
		code = intake.CodeUnauthorized
	case http.StatusRequestEntityTooLarge:
		code = intake.CodeTooLarge
	}
	return &Error{Code: code, Status: status,
		Message: fmt.Sprintf("HTTP %d from %s, not a Ballast reply (is the URL right?): %.200q", status, url, data)}
}
