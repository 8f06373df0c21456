package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// submitFile is `submit --file`: every line of path is one submission,
// sent in batches. A line that does not decode stops everything before
// anything is sent, naming the line.
func submitFile(ctx context.Context, e *env, cfgPath, path, natsURL, httpURL, token, out string) error {
	subs, err := readJobLines(path)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return err
	}
	keyless := 0
	for _, s := range subs {
		if s.IdempotencyKey == "" {
			keyless++
		}
	}
	var res []intake.BatchResult
	if httpURL != "" {
		if token == "" {
			token, _ = cfg.HTTP.Token()
		}
		res, err = client.NewHTTP(httpURL, token, &http.Client{Timeout: 5 * time.Minute}).SubmitBatch(ctx, subs)
	} else {
		if natsURL != "" {
			cfg.NATS.URL = natsURL
		}
		nc, cerr := connectNATS(cfg, "ballast-submit")
		if cerr != nil {
			return cerr
		}
		defer nc.Close()
		res, err = client.NewNATS(nc, subjects(cfg)).SubmitBatch(ctx, subs)
	}
	if err != nil {
		if len(res) > 0 {
			fmt.Fprintf(e.errOut, "the first %d jobs were sent before the error; %s\n", len(res), resubmitAdvice(keyless))
		}
		return explain(err)
	}
	if out == "json" {
		return writeJSON(e.out, intake.BatchReceipt{Results: res})
	}
	var fresh, dup, failed int
	for i, r := range res {
		switch {
		case r.Error != nil:
			failed++
			fmt.Fprintf(e.out, "line %d: not recorded: %s: %s\n", i+1, r.Error.Code, r.Error.Message)
		case r.Duplicate:
			dup++
		default:
			fresh++
		}
	}
	fmt.Fprintf(e.out, "%d jobs: %d new, %d already submitted (same idempotency key), %d not recorded\n", len(res), fresh, dup, failed)
	if failed > 0 {
		return fmt.Errorf("%d of %d jobs were not recorded; %s", failed, len(res), resubmitAdvice(keyless))
	}
	return nil
}

// resubmitAdvice says whether sending the file again is safe: only lines
// with their own idempotency key are found again rather than recorded twice.
func resubmitAdvice(keyless int) string {
	if keyless == 0 {
		return "resubmitting the file finds the recorded jobs by their keys"
	}
	return fmt.Sprintf("%d lines have no idempotency_key, so resubmitting the file would record those jobs again: give every line a key first", keyless)
}

// readJobLines reads one submission per non-blank line. A line without an
// idempotency key gets a random one from the client, which keeps a retried
// request safe but not a second run of the file: write keys into the file
// to make rerunning it safe.
func readJobLines(path string) ([]jobs.Submission, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--file: %w", err)
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), jobs.MaxSubmissionBytes+1)
	var subs []jobs.Submission
	var bad []string
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		s, err := jobs.DecodeSubmission(text)
		if err != nil {
			bad = append(bad, fmt.Sprintf("line %d: %v", line, explain(err)))
			continue
		}
		subs = append(subs, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--file %s: %w (a line is at most %d bytes)", path, err, jobs.MaxSubmissionBytes)
	}
	if len(bad) > 0 {
		msg := fmt.Sprintf("--file %s: %d lines do not decode; nothing was sent:", path, len(bad))
		for i, b := range bad {
			if i == 20 {
				msg += fmt.Sprintf("\n  ... and %d more", len(bad)-20)
				break
			}
			msg += "\n  " + b
		}
		return nil, fmt.Errorf("%s", msg)
	}
	if len(subs) == 0 {
		return nil, fmt.Errorf("--file %s holds no jobs: write one submission object per line, e.g. {\"template\":\"hello\",\"params\":{\"name\":\"you\"}}", path)
	}
	return subs, nil
}
