package workers

import (
	"bufio"
	"strings"
	"testing"
)

func TestParseMemTotal(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"MemTotal:       24576000 kB\nMemFree: 1 kB\n", 24576000 << 10},
		{"MemFree: 1 kB\n", 0},
		{"MemTotal: lots\n", 0},
		{"MemTotal: 5 MB\n", 0},
	} {
		if got := parseMemTotal(bufio.NewScanner(strings.NewReader(c.in))); got != c.want {
			t.Errorf("%q: %d, want %d", c.in, got, c.want)
		}
	}
	if machineMemory() <= 0 {
		t.Error("the machine's memory was not read from /proc/meminfo")
	}
}
