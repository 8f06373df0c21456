package queues_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestListPageWalksTheIndexOnce submits eleven jobs, several in the same
// millisecond, and pages through them three at a time: every job is seen
// once, newest first, and the filters narrow the pages without losing any.
func TestListPageWalksTheIndexOnce(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	var want []string // newest first
	first := c.Now()
	for i := range 11 {
		sp := spec(fmt.Sprintf("k%d", i))
		if i%3 == 0 {
			sp.Class, sp.Team = jobs.ClassBurst, "ml"
		}
		sub, err := s.Submit(ctx, sp, queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, sub.Job.ID)
		if i%4 == 3 { // the others share a millisecond with a neighbour
			c.Add(5 * time.Millisecond)
		}
	}
	// Newest first is the index's order: by creation, then by ID within
	// one millisecond.
	slices.SortFunc(want, func(a, b string) int {
		ja, _ := s.Get(ctx, a)
		jb, _ := s.Get(ctx, b)
		if c := jb.CreatedAt.Compare(ja.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b, a)
	})
	walk := func(o queues.PageOptions) []string {
		t.Helper()
		var got []string
		for range 20 {
			p, err := s.ListPage(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Jobs) > o.Limit {
				t.Fatalf("page of %d jobs, limit %d", len(p.Jobs), o.Limit)
			}
			for _, j := range p.Jobs {
				got = append(got, j.ID)
			}
			if p.Next == "" {
				return got
			}
			o.After = p.Next
		}
		t.Fatal("paging did not end")
		return nil
	}
	if got := walk(queues.PageOptions{ListOptions: queues.ListOptions{Limit: 3}}); !slices.Equal(got, want) {
		t.Errorf("pages gave\n%v, want\n%v", got, want)
	}
	var burst []string
	for _, id := range want {
		j, _ := s.Get(ctx, id)
		if j.Spec.Class == jobs.ClassBurst {
			burst = append(burst, id)
		}
	}
	if len(burst) != 4 {
		t.Fatalf("%d burst jobs, want 4", len(burst))
	}
	// A small scan makes pages that match nothing yet still go on.
	got := walk(queues.PageOptions{ListOptions: queues.ListOptions{Limit: 2, Scan: 2, Team: "ml"}, Class: jobs.ClassBurst})
	if !slices.Equal(got, burst) {
		t.Errorf("burst pages gave %v, want %v", got, burst)
	}
	if got := walk(queues.PageOptions{ListOptions: queues.ListOptions{Limit: 5}, IDPrefix: want[4]}); !slices.Equal(got, want[4:5]) {
		t.Errorf("prefix %s gave %v", want[4], got)
	}
	// Until excludes the jobs created at or after it.
	last, _ := s.Get(ctx, want[0])
	got = walk(queues.PageOptions{ListOptions: queues.ListOptions{Limit: 4, Since: first}, Until: last.CreatedAt})
	for _, id := range got {
		j, _ := s.Get(ctx, id)
		if !j.CreatedAt.Before(last.CreatedAt) {
			t.Errorf("job %s created %s is not before %s", id, j.CreatedAt, last.CreatedAt)
		}
	}
	if len(got) == 0 || len(got) >= len(want) {
		t.Errorf("until gave %d jobs of %d", len(got), len(want))
	}
	if _, err := s.ListPage(ctx, queues.PageOptions{After: "garbage"}); !errors.Is(err, queues.ErrBadCursor) {
		t.Errorf("a bad cursor gave %v", err)
	}
}
