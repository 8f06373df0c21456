package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/sweep"
)

// The README points at deploy/examples/sweep.json for `ballast dev`: it must
// decode and expand against the dev catalog.
func TestExampleSweepRunsOnTheDevCatalog(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "examples", "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := sweep.DecodeSpec(data)
	if err != nil {
		t.Fatalf("deploy/examples/sweep.json: %v", err)
	}
	cat, err := Dev().Catalog()
	if err != nil {
		t.Fatal(err)
	}
	trials, err := sweep.Expand(spec, cat)
	if err != nil {
		t.Fatalf("deploy/examples/sweep.json against the dev templates: %v", err)
	}
	if len(trials) != len(spec.Space.Grid["lr"]) || trials[0].Spec.Metric != "loss" {
		t.Fatalf("%d trials (metric %q), want one per lr", len(trials), trials[0].Spec.Metric)
	}
}
