package provider

import (
	"fmt"
	"testing"
)

func TestTailKeepsLastLines(t *testing.T) {
	tl := newTail(64, 2)
	for i := range 100 {
		fmt.Fprintf(tl, "line %d\n", i)
	}
	if got, want := tl.String(), "line 98 | line 99"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if n := len(tl.buf); n > 64 {
		t.Errorf("kept %d bytes, want at most 64", n)
	}
	if got := newTail(64, 2).String(); got != "" {
		t.Errorf("empty tail = %q", got)
	}
}
