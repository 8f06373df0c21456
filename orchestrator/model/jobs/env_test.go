package jobs

import (
	"reflect"
	"testing"
)

func TestResolveRendersEnvAndKeepsPassEnv(t *testing.T) {
	cat, err := NewCatalog(map[string]Template{
		"train": {
			Command: []string{"train"},
			Params:  map[string]ParamSpec{"mode": {Type: ParamEnum, Values: []string{"fast", "full"}, Default: "fast"}},
			Env:     map[string]string{"TRAIN_MODE": "${mode}-run", "PLAIN": "x y"},
			PassEnv: []string{"CUDA_HOME"},
		},
	})
	if err != nil {
		t.Fatalf("NewCatalog: %v", err)
	}
	spec, err := cat.Resolve(Submission{Template: "train", Params: raw(t, "mode", "full")})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if want := map[string]string{"TRAIN_MODE": "full-run", "PLAIN": "x y"}; !reflect.DeepEqual(spec.Env, want) {
		t.Errorf("Env = %v, want %v", spec.Env, want)
	}
	if want := []string{"CUDA_HOME"}; !reflect.DeepEqual(spec.PassEnv, want) {
		t.Errorf("PassEnv = %v, want %v", spec.PassEnv, want)
	}
}
