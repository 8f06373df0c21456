package insight

import (
	"slices"
	"testing"
)

// EnginesOf names every NATS server by scheme and host only, the stream's
// replicas, and the provider, "none" when the caller names none.
func TestEnginesOf(t *testing.T) {
	urls := "nats://10.0.0.1:4222, tls://someone:secret@nats-2.example:4222,nats://10.0.0.3:4222"
	e := EnginesOf(urls, "EV", 3, "")
	want := []string{"nats://10.0.0.1:4222", "tls://nats-2.example:4222", "nats://10.0.0.3:4222"}
	if !slices.Equal(e.NATS, want) || e.Stream != "EV" || e.StreamReplicas != 3 || e.Provider != "none" {
		t.Fatalf("EnginesOf = %+v, want servers %v, stream EV x3, provider none", e, want)
	}
	if got := EnginesOf(urls, "EV", 3, "kubernetes").Provider; got != "kubernetes" {
		t.Fatalf("provider %q, want kubernetes", got)
	}
	if got := EnginesOf("", "EV", 0, "").StreamReplicas; got != 1 {
		t.Fatalf("replicas %d for an unset count, want 1", got)
	}
}
