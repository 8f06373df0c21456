package jsonenc

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"
)

func TestStringIsWhatEncodingJSONWrites(t *testing.T) {
	for _, s := range []string{"", "plain", "job-01HZX", `quo"te`, `back\slash`, "<b>&</b>", "new\nline", "tab\t", "\x00\x1f\x7f",
		"日本語", "é", "\u2028\u2029", "bad\xffutf8", "\xed\xa0\x80", " spaces ", "~!@#$%^*()_+{}|:?"} {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Errorf("String(%q) = %s, encoding/json writes %s", s, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("plain")
	f.Add("<&>\"\\\n\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Fatalf("String(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}

func TestObjectIntIsWhatEncodingJSONWrites(t *testing.T) {
	for _, n := range []int64{0, 1, -1, 42, 1 << 40, -(1 << 62)} {
		want, _ := json.Marshal(map[string]int64{"n": n})
		o := Open(nil)
		o.Int("n", n)
		if got, err := o.Close(); err != nil || string(got) != string(want) {
			t.Errorf("Int(%d) gives %s (%v), want %s", n, got, err, want)
		}
	}
}

func TestFloatIsWhatEncodingJSONWrites(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.21, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.234e21, -3e-10, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-100} {
		want, _ := json.Marshal(f)
		if got, err := Float(nil, f); err != nil || string(got) != string(want) {
			t.Errorf("Float(%v) = %s (%v), encoding/json writes %s", f, got, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := json.Marshal(f); err == nil {
			t.Fatal("encoding/json takes", f)
		}
		if _, err := Float(nil, f); err == nil {
			t.Errorf("Float(%v) is taken, encoding/json refuses it", f)
		}
	}
}

func FuzzFloat(f *testing.F) {
	f.Add(0.5)
	f.Add(1e-7)
	f.Fuzz(func(t *testing.T, x float64) {
		want, werr := json.Marshal(x)
		got, err := Float(nil, x)
		if (werr == nil) != (err == nil) || (err == nil && string(got) != string(want)) {
			t.Fatalf("Float(%v) = %s (%v), encoding/json writes %s (%v)", x, got, err, want, werr)
		}
	})
}

func TestMapIsWhatEncodingJSONWrites(t *testing.T) {
	m := map[string]any{"lr": 0.01, "b": "x<y", "on": true, "none": nil, "n": 3, "list": []any{1, "a"}, "é": map[string]any{"k": 1e-8}}
	want, _ := json.Marshal(m)
	if got, err := Map(nil, m); err != nil || string(got) != string(want) {
		t.Errorf("Map = %s (%v), encoding/json writes %s", got, err, want)
	}
	// More keys than are sorted on the stack.
	big := map[string]any{}
	for i := range 20 {
		big[fmt.Sprintf("k%d", (i*7)%20)] = i
	}
	want, _ = json.Marshal(big)
	if got, err := Map(nil, big); err != nil || string(got) != string(want) {
		t.Errorf("Map of 20 keys = %s (%v), encoding/json writes %s", got, err, want)
	}
	sm := map[string]string{"b": "2", "a": "&", "": "empty"}
	want, _ = json.Marshal(sm)
	if got := StringMap(nil, sm); string(got) != string(want) {
		t.Errorf("StringMap = %s, encoding/json writes %s", got, want)
	}
	ss := []string{"a", "<b>", ""}
	want, _ = json.Marshal(ss)
	if got := Strings(nil, ss); string(got) != string(want) {
		t.Errorf("Strings = %s, encoding/json writes %s", got, want)
	}
}

// TestObjectKeepsTheFirstError: a member encoding/json refuses stops the
// object, and Close returns the error instead of a half-written object.
func TestObjectKeepsTheFirstError(t *testing.T) {
	o := Open([]byte("x"))
	o.String("a", "b")
	o.Float("f", math.NaN(), false)
	o.String("c", "d")
	if b, err := o.Close(); err == nil || b != nil {
		t.Fatalf("an object with a NaN member closed as %q, %v", b, err)
	}
	o = Open(nil)
	o.OmitEmpty("e", "")
	o.OmitZero("z", 0)
	o.OmitFalse("f", false)
	o.Float("g", 0, true)
	o.Map("m", nil)
	if b, err := o.Close(); err != nil || string(b) != "{}" {
		t.Fatalf("an object of omitted members is %q, %v", b, err)
	}
}

// TestObjectTimeIsWhatEncodingJSONWrites: a time member is MarshalJSON's,
// in any zone and precision, and the times it refuses are refused.
func TestObjectTimeIsWhatEncodingJSONWrites(t *testing.T) {
	east := time.FixedZone("east", 5*3600+30*60)
	for _, v := range []time.Time{{}, time.Date(2026, 12, 2, 5, 6, 7, 0, time.UTC), time.Date(2026, 12, 2, 5, 6, 7, 120_000_000, east),
		time.Date(1, 2, 3, 4, 5, 6, 7, time.FixedZone("west", -11*3600)), time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 1, time.Local), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 24*3600))} {
		want, werr := json.Marshal(map[string]time.Time{"t": v})
		o := Open(nil)
		o.Time("t", v)
		got, err := o.Close()
		if (werr == nil) != (err == nil) || string(got) != string(want) {
			t.Errorf("Time(%v) gives %s (%v), encoding/json writes %s (%v)", v, got, err, want, werr)
		}
	}
}
