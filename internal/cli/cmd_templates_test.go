package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTemplatesShowGivesParameterTypesDefaultsAndBounds reads the built-in
// dev templates: steps declares an int with bounds and a string default.
func TestTemplatesShowGivesParameterTypesDefaultsAndBounds(t *testing.T) {
	out := runOK(t, "templates")
	for _, w := range []string{"NAME", "hello", "steps", "step_time,steps", "nightly-features  core"} {
		if !strings.Contains(out, w) {
			t.Errorf("templates lacks %q:\n%s", w, out)
		}
	}
	out = runOK(t, "templates", "show", "steps")
	for _, w := range []string{"checkpointable  true", "PARAM      TYPE    REQUIRED  DEFAULT  BOUNDS",
		"steps      int     no        20       1..100000", "step_time  string  no        500ms    at most 4096 bytes"} {
		if !strings.Contains(out, w) {
			t.Errorf("templates show steps lacks %q:\n%s", w, out)
		}
	}
	var info templateInfo
	if err := json.Unmarshal([]byte(runOK(t, "templates", "show", "steps", "-o", "json")), &info); err != nil {
		t.Fatal(err)
	}
	if len(info.Params) != 2 || info.Params[0].Name != "step_time" || info.Params[1].Bounds != "1..100000" || info.MaxRetries != 3 {
		t.Errorf("json: %+v", info)
	}
	code, _, errOut := run(t, "templates", "show", "stpes")
	if code != 1 || !strings.Contains(errOut, "did you mean steps?") {
		t.Errorf("unknown template: exit %d %q", code, errOut)
	}
}
