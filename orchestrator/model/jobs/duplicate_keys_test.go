package jobs

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestDecodeSubmissionRefusesDuplicateKeys(t *testing.T) {
	cases := []struct {
		name, body, field string
	}{
		{"top level", `{"template":"a","team":"x","team":"y"}`, "team"},
		{"struct field in another case", `{"template":"a","Template":"b"}`, "Template"},
		{"folded like encoding/json does", `{"template":"a","team":"x","teaM":"y"}`, "teaM"},
		{"parameter", `{"template":"a","params":{"lr":0.1,"epochs":2,"lr":0.2}}`, "params.lr"},
		{"label", `{"template":"a","labels":{"exp":"a","exp":"b"}}`, "labels.exp"},
		{"inside a parameter's value", `{"template":"a","params":{"cfg":{"k":1,"k":2}}}`, "params.cfg.k"},
		{"inside an array", `{"template":"a","command":[{"x":1,"x":2}]}`, "command[0].x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeSubmission([]byte(c.body))
			expectProblems(t, err, want{c.field, "appears twice"})
		})
	}
}

func TestDecodeSubmissionMapKeysAreCaseSensitive(t *testing.T) {
	// Label keys "Exp" and "exp" are two labels, not a duplicate.
	s, err := DecodeSubmission([]byte(`{"template":"a","labels":{"Exp":"1","exp":"2"},"params":{"a":1,"A":2}}`))
	if err != nil {
		t.Fatalf("DecodeSubmission: %v", err)
	}
	if len(s.Labels) != 2 || len(s.Params) != 2 {
		t.Errorf("labels %v params %v, want two of each", s.Labels, s.Params)
	}
}

func TestDuplicateKeyLeavesSyntaxErrorsToTheDecoder(t *testing.T) {
	for _, body := range []string{`{"a":`, `{"a" 1}`, `[1,2`, ``, `{"a":1}}`} {
		if fe := DuplicateKey([]byte(body), submissionMaps); fe != nil {
			t.Errorf("DuplicateKey(%q) = %v, want nil", body, fe)
		}
	}
}

// walkDuplicateKey is DuplicateKey as it was written over encoding/json's
// tokens, the reference the library's walk is held to.
func walkDuplicateKey(dec *json.Decoder, path string, exact func(string) bool) (*FieldError, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			child := pathSegment(key)
			if path != "" {
				child = path + "." + child
			}
			norm := key
			if !exact(path) {
				norm = strings.ToLower(strings.ToUpper(key))
			}
			if seen[norm] {
				return &FieldError{Field: child, Message: duplicateKeyMessage}, nil
			}
			seen[norm] = true
			if fe, err := walkDuplicateKey(dec, child, exact); fe != nil || err != nil {
				return fe, err
			}
		}
		_, err = dec.Token()
		return nil, err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if fe, err := walkDuplicateKey(dec, path+"["+strconv.Itoa(i)+"]", exact); fe != nil || err != nil {
				return fe, err
			}
		}
		_, err = dec.Token()
		return nil, err
	}
	return nil, nil
}

// TestDuplicateKeyAgreesWithTheWalk: both ways DuplicateKey looks (the
// hand scan, where it answers, and the walk over the library's tokens)
// find the problem the walk over encoding/json's tokens finds, on tricky
// inputs and on random mutations of them (cut, doubled, changed bytes).
// Where the library refuses input that encoding/json reads (it is
// stricter about what JSON is), its walk may leave the problem to the
// decoder.
func TestDuplicateKeyAgreesWithTheWalk(t *testing.T) {
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
		`{"é":1,"É":2}`, `{"ſ":1,"S":2}`, `{"k":1,"K":2}`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":tru}`, `{"a":1,}`, `{,}`, `[1,]`, `{"a":1}}`,
		" \n{ \"a\" : [ ] , \"b\" : { } , \"A\" : 0 } ",
		`{"a":"x` + "\x01" + `","a":1}`,
		`{"a":[[[[{"b":1,"b":2}]]]]}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,` +
			`"k17":7,"k18":8,"k19":9,"k20":0,"k21":1,"k22":2,"k23":3,"k24":4,"k25":5,"k26":6,"k27":7,"k28":8,"k29":9,"k30":0,"k31":1,"k32":2,"K3":3}`,
	}
	exacts := []func(string) bool{submissionMaps, func(string) bool { return false }, func(string) bool { return true }}
	found := 0
	check := func(in []byte) {
		for _, exact := range exacts {
			want, _ := walkDuplicateKey(json.NewDecoder(bytes.NewReader(in)), "", exact)
			// The hand scan where it answers, and the library's walk.
			lib := walkDuplicateKeys(in, exact)
			if lib != nil {
				found++
			}
			if !sameProblem(lib, want) && (lib != nil || jsontext.Value(in).IsValid(jsontext.AllowDuplicateNames(true))) {
				t.Fatalf("on %q: the library's walk says %+v, encoding/json's %+v", in, lib, want)
			}
			if quick, ok := quickDuplicateKey(in, exact); ok && !sameProblem(quick, want) {
				t.Fatalf("on %q: the hand scan says %+v, encoding/json's walk %+v", in, quick, want)
			}
		}
	}
	for _, s := range seeds {
		check([]byte(s))
	}
	if found < len(seeds) {
		t.Fatalf("only %d duplicates found in %d seeds", found, len(seeds))
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]:,"\ aAbB01-.eEtrunlfs`)
	for range 20000 {
		check(mangle(r, seeds[r.IntN(len(seeds))], alphabet))
	}
}

func sameProblem(a, b *FieldError) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Field == b.Field && a.Message == b.Message
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

func BenchmarkDuplicateKey(b *testing.B) {
	data := []byte(`{"template":"trial","params":{"lr":0.21,"epochs":10},"idempotency_key":"m-4321","labels":{"exp":"a"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if DuplicateKey(data, submissionMaps) != nil {
			b.Fatal("no duplicate here")
		}
	}
}

// BenchmarkDuplicateKeyWalk: for input the hand scan leaves alone (an
// escaped key), the walk over the library's tokens replaced the one over
// encoding/json's.
func BenchmarkDuplicateKeyWalk(b *testing.B) {
	data := []byte(`{"template":"trial","params":{"l\u0072":0.21,"epochs":10},"idempotency_key":"m-4321","labels":{"exp":"a"}}`)
	if _, ok := quickDuplicateKey(data, submissionMaps); ok {
		b.Fatal("the hand scan answers")
	}
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if fe, _ := walkDuplicateKey(json.NewDecoder(bytes.NewReader(data)), "", submissionMaps); fe != nil {
				b.Fatal("no duplicate here")
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if walkDuplicateKeys(data, submissionMaps) != nil {
				b.Fatal("no duplicate here")
			}
		}
	})
}
