package config

import (
	"errors"
	"os"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzParse: no input panics or is accepted half-way; a refused one is
// reported as Problems, each saying what is wrong and where (a field, or a
// line for YAML that does not parse); an accepted one, written back as YAML,
// parses to the same config. (A few YAML syntax errors have no position in
// yaml.v3; those must at least come with the decoder's error.)
func FuzzParse(f *testing.F) {
	for _, path := range []string{"dev.yaml", "../../deploy/ballast.example.yaml"} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, seed := range []string{
		fixedPool,
		fixedPool + "templates:\n  t:\n    command: [env]\n    env: {A: \"${x}\"}\n    pass_env: [B, B]\n    params: {x: {type: int}}\n",
		"namespace: [1, 2]\n",
		"a: &a [*a, *a]\n",
		"pools:\n  fixed: {kind: fixed, slots: 1e9}\n",
		"---\n---\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.yaml")
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error %v (%T) is not Problems", err, err)
			}
			for _, p := range ps {
				if p.Message == "" || (p.Field == "" && p.Line == 0 && p.Err == nil) {
					t.Fatalf("problem %+v says nothing or names no field and no line", p)
				}
			}
			return
		}
		out, err := yaml.Marshal(cfg)
		if err != nil {
			t.Fatalf("an accepted config does not encode: %v", err)
		}
		cfg2, err := Parse(out, "fuzz-again.yaml")
		if err != nil {
			t.Fatalf("the accepted config written back is refused: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(cfg, cfg2) {
			t.Fatalf("the accepted config changed when written back:\n%s", out)
		}
	})
}
