package cli

import (
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
)

// The config's default cost retention is insight's, kept as two constants
// because config does not import insight.
func TestCostRetentionDefaultsAgree(t *testing.T) {
	if config.DefaultCostRetention != insight.Retention {
		t.Fatalf("config.DefaultCostRetention %v, insight.Retention %v", config.DefaultCostRetention, insight.Retention)
	}
}

// insightSource carries the config's NATS, provider, watermarks and
// retention into the Source.
func TestInsightSourceOfConfig(t *testing.T) {
	cfg := config.Dev()
	cfg.NATS.URL = "nats://10.0.0.1:4222,tls://someone:secret@nats-2.example:4222"
	cfg.NATS.Stream, cfg.NATS.StreamReplicas = "EV", 3
	cfg.Provider.Kind = config.ProviderKubernetes
	cfg = cfg.WithDefaults()
	src := insightSource(nil, cfg)
	want := []string{"nats://10.0.0.1:4222", "tls://nats-2.example:4222"}
	if !slices.Equal(src.Engines.NATS, want) || src.Engines.Stream != "EV" || src.Engines.StreamReplicas != 3 || src.Engines.Provider != "kubernetes" {
		t.Fatalf("Engines = %+v", src.Engines)
	}
	pc := cfg.PolicyConfig()
	if src.High != pc.High || src.Low != pc.Low || src.CoreMaxWait != pc.CoreMaxWait {
		t.Fatalf("watermarks %v/%v wait %v, want %v/%v %v", src.High, src.Low, src.CoreMaxWait, pc.High, pc.Low, pc.CoreMaxWait)
	}
	if got, want := src.KeptFor(), cfg.Controller.CostRetention.Std(); got != want || got <= time.Duration(0) {
		t.Fatalf("KeptFor %v, want %v", got, want)
	}
	if len(src.Pools) != len(cfg.PolicyPools()) {
		t.Fatalf("%d pools, want %d", len(src.Pools), len(cfg.PolicyPools()))
	}
}
