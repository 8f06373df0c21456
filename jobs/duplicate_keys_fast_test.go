package jobs

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// slowDuplicateKey is DuplicateKey's walk alone.
func slowDuplicateKey(data []byte, exact func(string) bool) *FieldError {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	fe, _ := walkJSON(dec, "", 0, exact)
	return fe
}

func sameProblem(a, b *FieldError) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Field == b.Field && a.Message == b.Message
}

// TestQuickDuplicateKeyAgreesWithWalk: wherever the fast scan answers, it
// answers as the walk does, on tricky inputs and on random mutations of
// them (cut, doubled, changed bytes).
func TestQuickDuplicateKeyAgreesWithWalk(t *testing.T) {
	seeds := []string{
		`{"template":"a","team":"x","team":"y"}`,
		`{"template":"a","Template":"b"}`,
		`{"template":"a","params":{"lr":0.1,"epochs":2,"lr":0.2}}`,
		`{"template":"a","params":{"LR":1,"lr":2},"labels":{"exp":"a","Exp":"b","exp":"c"}}`,
		`{"template":"a","params":{"cfg":{"k":1,"K":2}}}`,
		`{"template":"a","command":[{"x":1,"x":2}]}`,
		`[{"a":[1,{"b":true,"b":null}]},{"":1,"":2}]`,
		`{"[x":{"y":1,"y":2}}`,
		`{"a":"q\"uo\\te\u00e9","a":-1.5e+3}`,
		`{"a\u0041":1,"aA":2}`,
		`{"é":1,"É":2}`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":tru}`, `{"a":1,}`, `{,}`, `[1,]`, `{"a":1}}`,
		" \n{ \"a\" : [ ] , \"b\" : { } , \"A\" : 0 } ",
		`{"a":"x` + "\x01" + `","a":1}`,
		`{"a":[[[[{"b":1,"b":2}]]]]}`,
	}
	exacts := []func(string) bool{submissionMaps, func(string) bool { return false }, func(string) bool { return true }}
	check := func(in []byte) {
		for _, exact := range exacts {
			fast, ok := quickDuplicateKey(in, exact)
			if !ok {
				continue
			}
			if slow := slowDuplicateKey(in, exact); !sameProblem(fast, slow) {
				t.Fatalf("on %q: fast scan says %+v, the walk %+v", in, fast, slow)
			}
		}
	}
	answered := 0
	for _, s := range seeds {
		check([]byte(s))
		if _, ok := quickDuplicateKey([]byte(s), submissionMaps); ok {
			answered++
		}
	}
	if answered < len(seeds)/2 {
		t.Fatalf("the fast scan answered only %d of %d seeds", answered, len(seeds))
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]:,"\ aAbB01-.eEtrunlfs`)
	for range 20000 {
		check(mangle(r, seeds[r.IntN(len(seeds))], alphabet))
	}
}

func BenchmarkDuplicateKey(b *testing.B) {
	data := []byte(`{"template":"trial","params":{"lr":0.21,"epochs":10},"idempotency_key":"m-4321","labels":{"exp":"a"}}`)
	for range b.N {
		if DuplicateKey(data, submissionMaps) != nil {
			b.Fatal("no duplicate here")
		}
	}
}

// TestSplitBatchAgreesWithTheDecoder: wherever the scan splits a batch, the
// decoder accepts it and finds the same elements, byte for byte.
func TestSplitBatchAgreesWithTheDecoder(t *testing.T) {
	seeds := []string{
		`[{"template":"a"},{"template":"b","params":{"x":[1,2,{"y":null}]}}]`,
		" [ {\"a\":1} ,\t{\"b\":\"q\\\"\"}\n] \n",
		`[]`, `[1,"x",true,null,-0.5e3]`, `[{}]x`, `[{"a":1},]`, `[{"a":1}`, `[{"a":1,"a":2}]`,
	}
	check := func(in []byte) {
		raw, ok := SplitArray(in)
		if !ok {
			return
		}
		var want []json.RawMessage
		if err := decodeBatchArray(in, &want); err != nil {
			t.Fatalf("on %q: split into %d elements, but the decoder says %v", in, len(raw), err)
		}
		if len(raw) != len(want) {
			t.Fatalf("on %q: %d elements, the decoder %d", in, len(raw), len(want))
		}
		for i := range raw {
			if !bytes.Equal(raw[i], want[i]) {
				t.Fatalf("on %q: element %d is %q, the decoder's %q", in, i, raw[i], want[i])
			}
		}
	}
	split := 0
	for _, s := range seeds {
		check([]byte(s))
		if _, ok := SplitArray([]byte(s)); ok {
			split++
		}
	}
	if split < 4 {
		t.Fatalf("the scan split only %d of %d seeds", split, len(seeds))
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte(`{}[]:,"\ ab01-.etrunl`)
	for range 20000 {
		check(mangle(r, seeds[r.IntN(len(seeds))], alphabet))
	}
}

// mangle cuts, inserts or overwrites one to three bytes of seed, from
// alphabet.
func mangle(r *rand.Rand, seed string, alphabet []byte) []byte {
	in := []byte(seed)
	for range 1 + r.IntN(3) {
		switch p := r.IntN(len(in) + 1); r.IntN(3) {
		case 0:
			in = in[:p]
		case 1:
			in = append(in[:p:p], append([]byte{alphabet[r.IntN(len(alphabet))]}, in[p:]...)...)
		default:
			if p < len(in) {
				in[p] = alphabet[r.IntN(len(alphabet))]
			}
		}
	}
	return in
}
