package trace

import (
	"bytes"
	"runtime"
	"testing"
)

// allocatedBytes is how many bytes f allocates on the heap.
func allocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// reportThroughput adds jobs/s and MB/op (heap bytes allocated per
// operation, in 10^6 bytes) to a benchmark's results.
func reportThroughput(b *testing.B, jobsPerOp int, allocated uint64) {
	b.ReportMetric(float64(jobsPerOp)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(allocated)/1e6/float64(b.N), "MB/op")
}

func BenchmarkGenerate1M(b *testing.B) {
	g := DefaultSynthetic(1_000_000, 1)
	b.ReportAllocs()
	var n int
	allocated := allocatedBytes(func() {
		for b.Loop() {
			tr, err := Generate(g)
			if err != nil {
				b.Fatal(err)
			}
			n = len(tr.Jobs)
		}
	})
	reportThroughput(b, n, allocated)
}

func BenchmarkReadCSV1M(b *testing.B) {
	tr, err := Generate(DefaultSynthetic(1_000_000, 1))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, tr); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var n int
	allocated := allocatedBytes(func() {
		for b.Loop() {
			got, err := ReadCSV(bytes.NewReader(data), "bench")
			if err != nil {
				b.Fatal(err)
			}
			n = len(got.Jobs)
		}
	})
	reportThroughput(b, n, allocated)
}

func BenchmarkWriteCSV1M(b *testing.B) {
	tr, err := Generate(DefaultSynthetic(1_000_000, 1))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	allocated := allocatedBytes(func() {
		for b.Loop() {
			buf.Reset()
			if err := WriteCSV(&buf, tr); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.SetBytes(int64(buf.Len()))
	reportThroughput(b, len(tr.Jobs), allocated)
}
