package intake_test

import (
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
)

// A body with a duplicated key is refused by both transports before the
// Submitter sees it, and the reply names the key's path.
func TestDuplicateKeysRefusedOverNATSAndHTTP(t *testing.T) {
	t.Parallel()
	body := `{"template":"train","params":{"epochs":2,"epochs":3}}`
	rec := &recorder{}
	checks := map[string]reply{
		"nats": startNATS(t, rec, intake.NATSOptions{}).request(t, []byte(body)),
		"http": startHTTP(t, rec, "").post(t, strings.NewReader(body), "application/json", ""),
	}
	for transport, got := range checks {
		if got.err == nil || got.err.Code != intake.CodeInvalid || len(got.err.Problems) != 1 ||
			got.err.Problems[0].Field != "params.epochs" {
			t.Errorf("%s: reply %+v, want invalid naming params.epochs", transport, got.err)
		}
	}
	if subs := rec.submissions(); len(subs) != 0 {
		t.Errorf("the Submitter got %+v", subs)
	}
}
