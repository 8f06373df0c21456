package jobs

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestSpecJSONIsWhatEncodingJSONWrites: AppendJSON gives the bytes
// json.Marshal gives, over random specs with every field set or not and
// strings that need escaping. Its field counts fail when Spec or Size
// grows, until AppendJSON writes the new field.
func TestSpecJSONIsWhatEncodingJSONWrites(t *testing.T) {
	if n := reflect.TypeFor[Spec]().NumField(); n != 24 {
		t.Fatalf("Spec has %d fields; AppendJSON writes 24 (Size among them): teach it the new ones, then change this count", n)
	}
	if n := reflect.TypeFor[Size]().NumField(); n != 6 {
		t.Fatalf("Size has %d fields; AppendJSON writes 6: teach it the new ones, then change this count", n)
	}
	strs := []string{"", "train", "burst", `a"b\c`, "<x>&", "line\nbreak", "é日本", "\u2028", "bad\xff"}
	r := rand.New(rand.NewPCG(3, 4))
	pick := func() string { return strs[r.IntN(len(strs))] }
	some := func() bool { return r.IntN(2) == 0 }
	list := func() []string {
		if some() {
			return nil
		}
		out := make([]string, r.IntN(3))
		for i := range out {
			out[i] = pick()
		}
		return out
	}
	smap := func() map[string]string {
		if some() {
			return nil
		}
		m := map[string]string{}
		for range r.IntN(4) {
			m[pick()] = pick()
		}
		return m
	}
	values := []any{"s", "<&>", 0.21, 1e-9, -3.0, 1e22, true, false, nil, []any{1.0, "a"}, map[string]any{"z": 1.0}}
	for i := range 3000 {
		s := Spec{Template: pick(), Command: list(), Handler: pick(), Class: Class(pick()), Rhythm: Rhythm(pick()),
			Checkpointable: some(), Retryable: some(), MaxRetries: r.IntN(3), Timeout: Duration(r.Int64N(1e12)), Grace: Duration(r.Int64N(3)),
			Team: pick(), Labels: smap(), IdempotencyKey: pick(), Metric: pick(), Env: smap(), PassEnv: list(), TraceParent: pick(), QoS: pick()}
		if some() {
			s.Params = map[string]any{}
			for range r.IntN(4) {
				s.Params[pick()] = values[r.IntN(len(values))]
			}
		}
		if some() {
			s.NoRetryExitCodes = []int{r.IntN(256), -1}[:1+r.IntN(2)]
		}
		if some() {
			d := Duration(r.Int64N(1e10))
			s.CoreMaxWait = &d
		}
		if some() {
			s.StartBy = time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(time.FixedZone("z", 1800*r.IntN(4)))
		}
		if some() {
			s.Limits = &Limits{CPUs: 1.5, Memory: ByteSize(r.Int64N(1 << 30)), IO: []IOLimit{{}}, Required: some()}
		}
		if some() {
			s.Size = Size{Slots: r.IntN(9), Replicas: r.IntN(3), CPUs: float64(r.IntN(40)) / 8, Memory: ByteSize(r.Int64N(1 << 34)), Requires: smap(),
				GPUShare: float64(r.IntN(1000)) / 1000}
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.AppendJSON(nil)
		if err != nil || string(got) != string(want) {
			t.Fatalf("spec %d: AppendJSON gives\n%s (%v)\nencoding/json gives\n%s", i, got, err, want)
		}
	}
}

func BenchmarkSpecJSON(b *testing.B) {
	s := Spec{Template: "trial", Params: map[string]any{"lr": 0.01, "batch": 64.0, "name": "resnet"}, Command: []string{"python", "train.py", "--lr", "0.01"},
		Class: ClassBurst, Rhythm: RhythmSweep, Retryable: true, MaxRetries: 2, Timeout: Duration(time.Hour), Grace: Duration(30 * time.Second),
		Team: "vision", IdempotencyKey: "k-123456", Env: map[string]string{"LR": "0.01"}}
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(s)
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		for b.Loop() {
			_, _ = s.AppendJSON(make([]byte, 0, 512))
		}
	})
}
