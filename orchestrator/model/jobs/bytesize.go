package jobs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ByteSize is an amount of bytes written like 64MiB, 1.5GiB, 100MB or 4096.
// Binary (KiB, MiB, GiB, TiB) and decimal (KB, MB, GB, TB) units are both
// accepted because operators copy figures from tools that use either; a bare
// number is bytes. As a rate (storage and network limits) it is per second.
type ByteSize int64

var byteUnits = []struct {
	suffix string
	mult   float64
}{
	// Longest suffixes first, so "MiB" is not read as "B".
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseByteSize reads a size such as "512MiB".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a size: write it like 512MiB, 2GiB, 100MB or 4096 (bytes)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("%q is negative: a size is 0 or more", s)
	}
	v := f * mult
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return ByteSize(math.Round(v)), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, so config and JSON both
// take the written form.
func (b *ByteSize) UnmarshalText(text []byte) error {
	v, err := ParseByteSize(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalText writes the size as String does, which ParseByteSize reads back.
func (b ByteSize) MarshalText() ([]byte, error) { return []byte(b.compact()), nil }

// String is the size for people: "512 MiB", "1.5 GiB", "100 B". Whole
// binary units are written exactly, so a message names the configured figure.
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if int64(b) >= u.mult {
			v := float64(b) / float64(u.mult)
			if int64(b)%u.mult == 0 {
				return fmt.Sprintf("%d %s", int64(b)/u.mult, u.name)
			}
			return strconv.FormatFloat(v, 'f', 1, 64) + " " + u.name
		}
	}
	return fmt.Sprintf("%d B", int64(b))
}

// compact is the exact, parseable form: the largest binary unit that
// divides the size, else bytes.
func (b ByteSize) compact() string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.mult == 0 {
			return fmt.Sprintf("%d%s", int64(b)/u.mult, u.name)
		}
	}
	return strconv.FormatInt(int64(b), 10)
}
