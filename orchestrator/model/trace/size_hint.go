package trace

import (
	"io"
	"os"
)

// sizeOf reports how many bytes r has left when that is cheap to know: the
// in-memory readers (bytes.Reader, bytes.Buffer, strings.Reader) say so, and
// a regular file has a size. It returns -1 otherwise (pipes, network).
func sizeOf(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Len() int }:
		return int64(r.Len())
	case *os.File:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		pos, err := r.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return fi.Size() - pos
	}
	return -1
}

// jobsGrower sizes the Jobs slice of a streaming reader from the input's
// size. Growing by append alone allocates about five times the final slice
// in all (append grows large slices by 1.25x) and ends up to 25% too big;
// estimating the remaining lines from the bytes left makes the slice grow
// about once, to within a few percent of the final count.
type jobsGrower struct {
	total int64 // input bytes at the start; -1 when unknown
	// The estimate divides by the length of recent lines, counted from a
	// mark: lines grow longer through a trace as submit offsets gain digits,
	// so an average over the whole prefix would overestimate.
	markLines int
	markBytes int64
}

// reserve returns js with room for one more job, given the bytes of input
// consumed so far.
func (g *jobsGrower) reserve(js []Job, consumed int64) []Job {
	if len(js) < cap(js) || g.total < 0 {
		return js // room left, or no size to estimate from: append decides
	}
	lines := len(js)
	// The first 1/16 of a trace has its shortest lines; let append handle
	// it, moving the mark along, and estimate from what follows.
	if consumed < g.total/16 || lines-g.markLines < 256 {
		if consumed < g.total/16 {
			g.markLines, g.markBytes = lines, consumed
		}
		return js
	}
	perLine := float64(consumed-g.markBytes) / float64(lines-g.markLines)
	more := int(float64(g.total-consumed)/perLine*1.01) + 256
	newCap := min(lines+more, MaxJobs)
	if newCap <= lines {
		return js
	}
	grown := make([]Job, lines, newCap)
	copy(grown, js)
	g.markLines, g.markBytes = lines, consumed
	return grown
}
