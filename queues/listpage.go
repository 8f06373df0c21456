package queues

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// PageOptions filter and page the job index for the console: List's
// filters, and the class, pool, creation bound, ID prefix and cursor a
// person narrowing a list in a browser asks for.
type PageOptions struct {
	ListOptions
	// Class and Pool keep only jobs of this class, whose current (or last)
	// attempt ran on this pool ("" = all).
	Class jobs.Class
	Pool  string
	// Until keeps only jobs created before it (zero = no bound).
	Until time.Time
	// IDPrefix keeps only jobs whose ID starts with it.
	IDPrefix string
	// After is the Next of the page before ("" = the newest jobs first).
	After string
}

// Page is one page of the job index, newest first.
type Page struct {
	Jobs []jobs.Job `json:"jobs"`
	// Next is the cursor of the following page: set whenever the index
	// holds older entries than the last one examined, even when fewer
	// than Limit jobs matched, since a page stops after examining Scan
	// entries.
	Next string `json:"next,omitempty"`
	// Examined is how many index entries this page read.
	Examined int `json:"examined"`
}

// ErrBadCursor is returned (wrapped) for an After that no page gave.
var ErrBadCursor = errors.New("queues: bad page cursor")

// cursor is a position in the index: the score and member of the last
// entry examined. Members of one score sort by ID, so both are needed.
type cursor struct {
	score int64
	id    string
}

func (c cursor) String() string { return strconv.FormatInt(c.score, 10) + "." + c.id }

func parseCursor(s string) (cursor, error) {
	ms, id, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !jobs.ValidID(id) {
		return cursor{}, fmt.Errorf("%w %q: pass back the next value of the previous page", ErrBadCursor, s)
	}
	return cursor{score: n, id: id}, nil
}

// keepsPage is ListOptions.keeps with the page's own filters.
func (o PageOptions) keepsPage(j jobs.Job) bool {
	switch {
	case !o.keeps(j),
		o.Class != "" && j.Spec.Class != o.Class,
		o.Pool != "" && j.Pool != o.Pool,
		!o.Until.IsZero() && !j.CreatedAt.Before(o.Until),
		!strings.HasPrefix(j.ID, o.IDPrefix):
		return false
	}
	return true
}

// ListPage returns up to Limit jobs passing every filter, newest first,
// starting after the cursor After. It examines at most Scan index entries
// (default 10×Limit), so a rare match never makes one request read the
// whole history; the returned Next goes on from where it stopped.
func (s *Store) ListPage(ctx context.Context, o PageOptions) (Page, error) {
	if o.Limit <= 0 {
		o.Limit = 50
	}
	o.Limit = min(o.Limit, 1000)
	scan := o.Scan
	if scan <= 0 {
		scan = 10 * o.Limit
	}
	scan = max(scan, o.Limit)
	maxScore, minScore := "+inf", "-inf"
	if !o.Until.IsZero() {
		maxScore = "(" + strconv.FormatInt(o.Until.UnixMilli(), 10)
	}
	var from cursor
	if o.After != "" {
		c, err := parseCursor(o.After)
		if err != nil {
			return Page{}, err
		}
		from = c
		if o.Until.IsZero() || c.score < o.Until.UnixMilli() {
			maxScore = strconv.FormatInt(c.score, 10)
		}
	}
	if !o.Since.IsZero() {
		minScore = strconv.FormatInt(o.Since.UnixMilli(), 10)
	}
	var zs []redis.Z
	if o.After != "" && maxScore == strconv.FormatInt(from.score, 10) {
		// The cursor's own millisecond first, the members after it (they
		// sort by ID, descending here), then the strictly older entries.
		same, err := s.rdb.ZRevRangeByScoreWithScores(ctx, s.ns.JobIndex(), &redis.ZRangeBy{Max: maxScore, Min: maxScore}).Result()
		if err != nil {
			return Page{}, wrap("queues.ListPage", err)
		}
		for _, z := range same {
			if z.Member.(string) < from.id {
				zs = append(zs, z)
			}
		}
		maxScore = "(" + maxScore
	}
	if len(zs) <= scan {
		older, err := s.rdb.ZRevRangeByScoreWithScores(ctx, s.ns.JobIndex(), &redis.ZRangeBy{Max: maxScore, Min: minScore, Count: int64(scan + 1 - len(zs))}).Result()
		if err != nil {
			return Page{}, wrap("queues.ListPage", err)
		}
		zs = append(zs, older...)
	}
	more := len(zs) > scan
	if more {
		zs = zs[:scan]
	}
	ids := make([]string, len(zs))
	for i, z := range zs {
		ids[i] = z.Member.(string)
	}
	page := Page{Examined: len(ids)}
	// Read in chunks and stop at Limit matches, so Next points just past
	// the last job returned rather than past entries never shown.
	for i := 0; i < len(ids) && len(page.Jobs) < o.Limit; i += o.Limit {
		chunk := ids[i:min(i+o.Limit, len(ids))]
		got, err := s.getMany(ctx, chunk, func(jobs.Job) bool { return true }, len(chunk))
		if err != nil {
			return Page{}, err
		}
		byID := make(map[string]jobs.Job, len(got))
		for _, j := range got {
			byID[j.ID] = j
		}
		for k, id := range chunk {
			j, ok := byID[id]
			if !ok || !o.keepsPage(j) {
				continue
			}
			page.Jobs = append(page.Jobs, j)
			if len(page.Jobs) == o.Limit {
				last := i + k
				page.Examined = last + 1
				if last+1 < len(ids) || more {
					page.Next = cursor{score: int64(zs[last].Score), id: id}.String()
				}
				return page, nil
			}
		}
	}
	if more && len(zs) > 0 {
		last := zs[len(zs)-1]
		page.Next = cursor{score: int64(last.Score), id: last.Member.(string)}.String()
	}
	if page.Jobs == nil {
		page.Jobs = []jobs.Job{}
	}
	return page, nil
}
