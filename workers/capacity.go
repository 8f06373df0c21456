package workers

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// machineMemory is the machine's memory in bytes (MemTotal of
// /proc/meminfo), or 0 where that cannot be read: memory is then not
// accounted, and a sized job asking for memory is placed on slots alone.
func machineMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	return parseMemTotal(bufio.NewScanner(f))
}

// parseMemTotal reads the "MemTotal: N kB" line.
func parseMemTotal(sc *bufio.Scanner) int64 {
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) != 2 || fs[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0
		}
		return kb << 10
	}
	return 0
}
