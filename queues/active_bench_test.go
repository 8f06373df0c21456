package queues_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
)

// BenchmarkActiveJobs measures the controller's per-tick read of a 10,000-job
// backlog whose specs carry about 1 KB of parameters each. Specs are decoded
// once per job, so every read after the first fetches only changing fields.
func BenchmarkActiveJobs(b *testing.B) {
	rdb, ns := testenv.Redis(b)
	s := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	sp := spec("")
	sp.Params = map[string]any{}
	for k := 0; k < 20; k++ {
		sp.Params[fmt.Sprintf("parameter_%02d", k)] = "datasets/some/longer/path/for/this/parameter/v2"
	}
	for i := 0; i < 10000; i++ {
		if _, err := s.Submit(ctx, sp, queues.QueueBurst); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.ActiveJobs(ctx); err != nil { // the first read fills the spec cache
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if js, err := s.ActiveJobs(ctx); err != nil || len(js) != 10000 {
			b.Fatalf("%d jobs, %v", len(js), err)
		}
	}
}
