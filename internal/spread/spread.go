// Package spread runs the independent steps of a long batch on every core.
package spread

import (
	"runtime"
	"sync"
)

// minPerCore is how many steps a core takes on before another is worth a
// goroutine: below it, starting one costs more than it saves.
const minPerCore = 256

// Each calls f(i) for every i in [0, n), spread in strides over as many
// goroutines as there are cores (one for a short list), and returns once
// every call has. The calls must be independent of each other: f writes
// only what belongs to its i.
func Each(n int, f func(i int)) {
	parts := min(runtime.GOMAXPROCS(0), 1+n/minPerCore)
	if parts <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for i := p; i < n; i += parts {
				f(i)
			}
		})
	}
	wg.Wait()
}
