package trace

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

var errRange = fmt.Errorf("out of range (at most %d seconds)", int64(MaxOffset/time.Second))

// parseSeconds reads decimal seconds ("12", "0.25", "1e-05", "-3") into a
// Duration rounded to the nanosecond. Callers check the sign, since whether
// 0 or a negative value is allowed depends on the column.
//
// Plain decimals, which is all WriteCSV and the public traces produce, are
// converted exactly with integer arithmetic: a float64 cannot hold every
// millisecond of a long trace exactly, and round trips must be exact. Other
// spellings (exponents, signs) that other tools write go through ParseFloat.
func parseSeconds(b []byte) (time.Duration, error) {
	const maxSec = int64(MaxOffset / time.Second)
	var sec, frac int64
	i, roundUp := 0, false
	for ; i < len(b) && isDigit(b[i]); i++ {
		if sec > maxSec {
			return 0, errRange
		}
		sec = sec*10 + int64(b[i]-'0')
	}
	digits := i
	fracDigits := 0
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for ; i < len(b) && isDigit(b[i]); i++ {
			switch n := i - start; {
			case n < 9:
				frac = frac*10 + int64(b[i]-'0')
			case n == 9:
				// Round half up on the first digit past nanoseconds.
				roundUp = b[i] >= '5'
			}
		}
		fracDigits = i - start
		digits += fracDigits
	}
	if i != len(b) || digits == 0 {
		return parseSecondsFloat(b)
	}
	for n := fracDigits; n < 9; n++ {
		frac *= 10
	}
	if sec > maxSec {
		return 0, errRange
	}
	d := time.Duration(sec)*time.Second + time.Duration(frac)
	if roundUp {
		d++
	}
	if d > MaxOffset {
		return 0, errRange
	}
	return d, nil
}

func parseSecondsFloat(b []byte) (time.Duration, error) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(f) {
		if len(b) == 0 {
			return 0, errors.New("empty, want seconds")
		}
		return 0, fmt.Errorf("%q is not a number of seconds", b)
	}
	if math.Abs(f) > MaxOffset.Seconds() {
		return 0, errRange
	}
	return time.Duration(math.Round(f * 1e9)), nil
}

// appendSeconds writes d >= 0 as decimal seconds with as many fraction
// digits as needed to be exact: whole seconds stay short ("90") and nothing
// below them is lost ("0.001", "1.000000001").
func appendSeconds(buf []byte, d time.Duration) []byte {
	buf = strconv.AppendInt(buf, int64(d/time.Second), 10)
	frac := int64(d % time.Second)
	if frac == 0 {
		return buf
	}
	var digits [9]byte
	for i := 8; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 9
	for digits[n-1] == '0' {
		n--
	}
	buf = append(buf, '.')
	return append(buf, digits[:n]...)
}

// parseCount reads a non-negative integer such as a GPU count. Exported
// traces are often written by pandas, which turns an integer column holding
// any missing value into floats ("8.0"), so a zero fraction is accepted.
func parseCount(b []byte, limit int) (int, error) {
	n := 0
	i := 0
	for ; i < len(b) && isDigit(b[i]); i++ {
		n = n*10 + int(b[i]-'0')
		if n > limit {
			return 0, fmt.Errorf("%s is more than %d", b, limit)
		}
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a whole number", b)
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i] == '0'; i++ {
		}
	}
	if i != len(b) {
		return 0, fmt.Errorf("%q is not a whole number", b)
	}
	return n, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
