package client

import (
	"bytes"
	"strconv"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// parseResult reads one result of a batch's reply when it has exactly the
// form the intake writes for a recorded job,
// {"job_id":"...","attempt":N,"state":"...","queue":"...","duplicate":B},
// with no escapes in its strings; ok is false for anything else (an
// error, another order, spacing), which the caller reads with
// encoding/json instead. A reply holds one result per job, and reading
// each with encoding/json was the better part of what the caller spends
// on a batch's answer.
func parseResult(data []byte) (r intake.BatchResult, ok bool) {
	var rec intake.Receipt
	rest, ok := data, true
	str := func(prefix string) string {
		if !ok || !bytes.HasPrefix(rest, []byte(prefix)) {
			ok = false
			return ""
		}
		rest = rest[len(prefix):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
			ok = false
			return ""
		}
		s := string(rest[:end])
		rest = rest[end+1:]
		return s
	}
	rec.JobID = str(`{"job_id":"`)
	if !ok || !bytes.HasPrefix(rest, []byte(`,"attempt":`)) {
		return r, false
	}
	rest = rest[len(`,"attempt":`):]
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	n, err := strconv.Atoi(string(rest[:digits]))
	if digits == 0 || digits > 9 || (digits > 1 && rest[0] == '0') || err != nil { // JSON has no leading zeros
		return r, false
	}
	rec.Attempt = n
	rest = rest[digits:]
	rec.State = jobs.State(str(`,"state":"`))
	rec.Queue = str(`,"queue":"`)
	if !ok {
		return r, false
	}
	switch {
	case bytes.Equal(rest, []byte(`,"duplicate":false}`)):
	case bytes.Equal(rest, []byte(`,"duplicate":true}`)):
		rec.Duplicate = true
	default:
		return r, false
	}
	if !plainASCII(rec.JobID, string(rec.State), rec.Queue) {
		return r, false
	}
	r.Receipt = &rec
	return r, true
}

// plainASCII reports whether every string is printable ASCII. Control
// characters are not valid in a JSON string, and encoding/json replaces
// invalid UTF-8: both are left to it, and so is any other non-ASCII.
func plainASCII(ss ...string) bool {
	for _, s := range ss {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f {
				return false
			}
		}
	}
	return true
}
