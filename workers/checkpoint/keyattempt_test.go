package checkpoint

import (
	"slices"
	"testing"
)

func TestKeyAttempt(t *testing.T) {
	k := manifestKey("job-1", 12, 3, "ab12cd34")
	if a, ok := KeyAttempt(k); !ok || a != 12 {
		t.Errorf("KeyAttempt(%q) = %d %v, want 12", k, a, ok)
	}
	for _, bad := range []string{"jobs/j/chunks/00ff", "jobs/j/manifests/x-1-n.json", "nonsense"} {
		if a, ok := KeyAttempt(bad); ok {
			t.Errorf("KeyAttempt(%q) = %d, want none", bad, a)
		}
	}
	keys := []string{manifestKey("j", 3, 2, "a"), manifestKey("j", 3, 1, "b"), manifestKey("j", 2, 5, "c"), "odd"}
	if got, want := Earlier(keys, 3), keys[2:]; !slices.Equal(got, want) {
		t.Errorf("Earlier(3) = %v, want %v", got, want)
	}
	if got := Earlier(keys, 4); !slices.Equal(got, keys) {
		t.Errorf("Earlier(4) = %v, want all", got)
	}
}
