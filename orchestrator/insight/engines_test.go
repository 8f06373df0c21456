package insight

import (
	"slices"
	"testing"

	"github.com/ballastdev/ballast/internal/config"
)

// EnginesOf names every NATS server by scheme and host only, the stream's
// replicas, and the provider, "none" when the config names none.
func TestEnginesOf(t *testing.T) {
	cfg := config.Dev()
	cfg.NATS.URL = "nats://10.0.0.1:4222, tls://someone:secret@nats-2.example:4222,nats://10.0.0.3:4222"
	cfg.NATS.Stream, cfg.NATS.StreamReplicas = "EV", 3
	cfg.Provider.Kind = ""
	e := EnginesOf(cfg)
	want := []string{"nats://10.0.0.1:4222", "tls://nats-2.example:4222", "nats://10.0.0.3:4222"}
	if !slices.Equal(e.NATS, want) || e.Stream != "EV" || e.StreamReplicas != 3 || e.Provider != "none" {
		t.Fatalf("EnginesOf = %+v, want servers %v, stream EV x3, provider none", e, want)
	}
	cfg.Provider.Kind = config.ProviderKubernetes
	if got := EnginesOf(cfg).Provider; got != "kubernetes" {
		t.Fatalf("provider %q, want kubernetes", got)
	}
}
