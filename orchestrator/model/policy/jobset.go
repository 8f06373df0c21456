package policy

import (
	"iter"
	"sort"
)

// chunkMax bounds a jobSet chunk: an insert or removal moves at most this
// many pointers, and a walk touches one chunk header per chunkMax jobs.
const chunkMax = 256

// jobSet holds queued jobs in queue order (byQueueOrder). It is a sorted
// list cut into chunks, so keeping it sorted as jobs come and go costs a
// binary search and a short copy, where re-sorting the queue on every tick
// cost the whole backlog. A job's queue-order fields must not change while
// it is in a set: the index takes it out first.
type jobSet struct {
	chunks [][]*Job
	n      int
}

// search returns the chunk and position at which j is or would be.
func (s *jobSet) search(j *Job) (int, int) {
	ci := sort.Search(len(s.chunks), func(c int) bool {
		ch := s.chunks[c]
		return byQueueOrder(ch[len(ch)-1], j) >= 0
	})
	if ci == len(s.chunks) {
		if ci == 0 {
			return 0, 0
		}
		ci--
		return ci, len(s.chunks[ci])
	}
	ch := s.chunks[ci]
	return ci, sort.Search(len(ch), func(k int) bool { return byQueueOrder(ch[k], j) >= 0 })
}

func (s *jobSet) insert(j *Job) {
	s.n++
	if len(s.chunks) == 0 {
		s.chunks = append(s.chunks, []*Job{j})
		return
	}
	ci, i := s.search(j)
	ch := append(s.chunks[ci], nil)
	copy(ch[i+1:], ch[i:])
	ch[i] = j
	if len(ch) <= chunkMax {
		s.chunks[ci] = ch
		return
	}
	// Split in halves; the second half gets a fresh array so that appends
	// to the first cannot overwrite it.
	half := len(ch) / 2
	second := append(make([]*Job, 0, chunkMax+1), ch[half:]...)
	s.chunks[ci] = ch[:half:half]
	s.chunks = append(s.chunks, nil)
	copy(s.chunks[ci+2:], s.chunks[ci+1:])
	s.chunks[ci+1] = second
}

// remove takes j out; it reports whether j was there.
func (s *jobSet) remove(j *Job) bool {
	if len(s.chunks) == 0 {
		return false
	}
	ci, i := s.search(j)
	if ci >= len(s.chunks) || i >= len(s.chunks[ci]) || s.chunks[ci][i] != j {
		return false
	}
	s.n--
	ch := s.chunks[ci]
	copy(ch[i:], ch[i+1:])
	ch[len(ch)-1] = nil
	ch = ch[:len(ch)-1]
	if len(ch) > 0 {
		s.chunks[ci] = ch
		return true
	}
	s.chunks = append(s.chunks[:ci], s.chunks[ci+1:]...)
	return true
}

// all yields the jobs in queue order.
func (s *jobSet) all() iter.Seq[*Job] {
	return func(yield func(*Job) bool) {
		for _, ch := range s.chunks {
			for _, j := range ch {
				if !yield(j) {
					return
				}
			}
		}
	}
}

// backward yields the jobs newest first.
func (s *jobSet) backward() iter.Seq[*Job] {
	return func(yield func(*Job) bool) {
		for c := len(s.chunks) - 1; c >= 0; c-- {
			ch := s.chunks[c]
			for k := len(ch) - 1; k >= 0; k-- {
				if !yield(ch[k]) {
					return
				}
			}
		}
	}
}

// cursor walks chunks of jobs in queue order, or newest first.
type cursor struct {
	chunks  [][]*Job
	c, k    int
	reverse bool
}

func newCursor(chunks [][]*Job, reverse bool) cursor {
	cur := cursor{chunks: chunks, reverse: reverse}
	if reverse {
		cur.c = len(chunks) - 1
		if cur.c >= 0 {
			cur.k = len(chunks[cur.c]) - 1
		}
	}
	return cur
}

// head is the job the cursor is at, nil at the end.
func (cur *cursor) head() *Job {
	if cur.c < 0 || cur.c >= len(cur.chunks) {
		return nil
	}
	return cur.chunks[cur.c][cur.k]
}

func (cur *cursor) advance() {
	if cur.reverse {
		if cur.k--; cur.k < 0 {
			if cur.c--; cur.c >= 0 {
				cur.k = len(cur.chunks[cur.c]) - 1
			}
		}
		return
	}
	if cur.k++; cur.k >= len(cur.chunks[cur.c]) {
		cur.c, cur.k = cur.c+1, 0
	}
}

// merged yields the jobs of several chunk lists, each in queue order, as
// one sequence in queue order (newest first with reverse). The lists are
// few (one per class of a queue), so the next job is found by comparing
// the heads; byQueueOrder ends in the ID, so the order is total.
func merged(reverse bool, lists ...[][]*Job) iter.Seq[*Job] {
	return func(yield func(*Job) bool) {
		curs := make([]cursor, 0, len(lists))
		for _, l := range lists {
			if cur := newCursor(l, reverse); cur.head() != nil {
				curs = append(curs, cur)
			}
		}
		for len(curs) > 0 {
			best := 0
			for k := 1; k < len(curs); k++ {
				if c := byQueueOrder(curs[k].head(), curs[best].head()); c != 0 && (c < 0) != reverse {
					best = k
				}
			}
			if !yield(curs[best].head()) {
				return
			}
			if curs[best].advance(); curs[best].head() == nil {
				curs = append(curs[:best], curs[best+1:]...)
			}
		}
	}
}
