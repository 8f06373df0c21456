package gpu_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/workers/gpu"
)

const a100 = "0, GPU-9a3b1c2d-0000-1111-2222-333344445555, NVIDIA A100-SXM4-80GB, 81920 MiB\n" +
	"1, GPU-9a3b1c2d-0000-1111-2222-333344446666, NVIDIA A100-SXM4-80GB, 81920 MiB\n"

func TestParse(t *testing.T) {
	devs, err := gpu.Parse([]byte("\n  " + a100 + "\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []gpu.Device{
		{Index: 0, UUID: "GPU-9a3b1c2d-0000-1111-2222-333344445555", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920},
		{Index: 1, UUID: "GPU-9a3b1c2d-0000-1111-2222-333344446666", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920},
	}
	if len(devs) != len(want) {
		t.Fatalf("got %+v, want %+v", devs, want)
	}
	for i := range want {
		if devs[i] != want[i] {
			t.Errorf("device %d: %+v, want %+v", i, devs[i], want[i])
		}
	}
	// Without units (nounits), out of index order, a name with a comma.
	devs, err = gpu.Parse([]byte("1,GPU-ab,Odd, Name,1024\n0,GPU-cd,Tesla T4,15360"))
	if err != nil {
		t.Fatal(err)
	}
	if devs[0].Index != 0 || devs[1].Name != "Odd, Name" || devs[1].MemoryMiB != 1024 {
		t.Errorf("got %+v", devs)
	}
	if devs, err := gpu.Parse([]byte("\n \n")); err != nil || len(devs) != 0 {
		t.Errorf("blank output: %v %v, want no devices and no error", devs, err)
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"0, GPU-ab, A100\n", `line 1 "0, GPU-ab, A100": 3 fields, want 4`},
		{a100 + "x, GPU-ab, A100, 1 MiB\n", `line 3 "x, GPU-ab, A100, 1 MiB": index "x"`},
		{"0, 1234, A100, 1 MiB", `line 1 "0, 1234, A100, 1 MiB": uuid "1234"`},
		{"0, GPU-ab, [N/A], 1 MiB", `name "[N/A]"`},
		{"0, GPU-ab, A100, [N/A]", `memory.total "[N/A]" is not a positive number`},
		{"0, GPU-ab, A100, 0 MiB", `memory.total "0 MiB"`},
		{"0, GPU-ab, A100, 1 GiB", `memory.total "1 GiB"`},
		{"0, GPU-ab, A, 1\n\n0, GPU-cd, A, 1", `line 3 "0, GPU-cd, A, 1": index 0 is also on line 1`},
		{"0, GPU-ab, A, 1\n1, GPU-ab, A, 1", `line 2 "1, GPU-ab, A, 1": uuid GPU-ab is also on line 1`},
		{"No devices were found", `line 1 "No devices were found"`},
	} {
		_, err := gpu.Parse([]byte(c.out))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", c.out, err, c.want)
		}
	}
}

// The nvidia-smi these tests run is a stand-in script (testenv), printing
// what a 4-GPU A100 machine prints: there are no GPUs here.
func TestDetect(t *testing.T) {
	dir := testenv.FakeNvidiaSMI(t, 4)
	devs, err := gpu.Detect(context.Background(), filepath.Join(dir, "nvidia-smi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 4 {
		t.Fatalf("Detect found %d GPUs, want 4: %+v", len(devs), devs)
	}
	for i, d := range devs {
		if d.Index != i || d.UUID != testenv.FakeGPUUUID(i) || d.Name != testenv.FakeGPUModel || d.MemoryMiB != 81920 {
			t.Errorf("device %d: %+v", i, d)
		}
	}
	if m := gpu.Model(devs); m != testenv.FakeGPUModel {
		t.Errorf("Model = %q", m)
	}
}

func TestDetectOnPath(t *testing.T) {
	testenv.FakeGPUPath(t, 2)
	devs, err := gpu.Detect(context.Background(), "")
	if err != nil || len(devs) != 2 {
		t.Fatalf("Detect = %+v, %v; want 2 GPUs", devs, err)
	}
}

func TestDetectMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := gpu.Detect(context.Background(), "")
	if !errors.Is(err, gpu.ErrNoNvidiaSMI) || !strings.Contains(err.Error(), "no NVIDIA driver") {
		t.Errorf("Detect without nvidia-smi: %v", err)
	}
}

func TestDetectFailure(t *testing.T) {
	dir := testenv.FakeNvidiaSMIScript(t, "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9\n")
	_, err := gpu.Detect(context.Background(), filepath.Join(dir, "nvidia-smi"))
	if err == nil || !strings.Contains(err.Error(), "exit status 9") || !strings.Contains(err.Error(), "couldn't communicate") {
		t.Errorf("Detect of a failing nvidia-smi: %v", err)
	}
	dir = testenv.FakeNvidiaSMIScript(t, "echo 0, GPU-ab, A100\n")
	_, err = gpu.Detect(context.Background(), filepath.Join(dir, "nvidia-smi"))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("Detect of bad output: %v", err)
	}
}

func fourGPUs(t *testing.T) []gpu.Device {
	t.Helper()
	devs, err := gpu.Parse([]byte(testenv.FakeNvidiaSMIOutput(4)))
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

func indices(devs []gpu.Device) []int {
	out := make([]int, len(devs))
	for i, d := range devs {
		out[i] = d.Index
	}
	return out
}

func TestSelect(t *testing.T) {
	all := fourGPUs(t)
	for _, c := range []struct {
		spec string
		want []int
	}{
		{"auto", []int{0, 1, 2, 3}},
		{" 0,1,2,3 ", []int{0, 1, 2, 3}},
		{"3, 1", []int{1, 3}},
		{testenv.FakeGPUUUID(2) + "," + testenv.FakeGPUUUID(0), []int{0, 2}},
		{strings.ToUpper(testenv.FakeGPUUUID(1)[4:]), nil}, // not a UUID without GPU-: an error below
	} {
		got, err := gpu.Select(all, c.spec)
		if c.want == nil {
			if err == nil {
				t.Errorf("Select(%q) = %v, want an error", c.spec, indices(got))
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("Select(%q) = %v, %v; want %v", c.spec, indices(got), err, c.want)
			continue
		}
		for i := range c.want {
			if got[i].Index != c.want[i] {
				t.Errorf("Select(%q) = %v, want %v", c.spec, indices(got), c.want)
			}
		}
	}
}

func TestSelectErrors(t *testing.T) {
	all := fourGPUs(t)
	for _, c := range []struct{ spec, want string }{
		{"", "empty"},
		{"4", "no GPU with index 4 on this machine (it has 0, 1, 2, 3)"},
		{"0,0", "0 is named twice"},
		{"1," + testenv.FakeGPUUUID(1), "either all indices or all UUIDs"},
		{testenv.FakeGPUUUID(1) + ",1", "either all indices or all UUIDs"},
		{testenv.FakeGPUUUID(1) + "," + strings.ToUpper(testenv.FakeGPUUUID(1)), "named twice"},
		{"GPU-ffff", "no GPU GPU-ffff on this machine (it has " + testenv.FakeGPUUUID(0)},
		{"0,,1", "item 2"},
		{"all", `"all" is neither an index`},
		{"-1", `"-1" is neither an index`},
	} {
		_, err := gpu.Select(all, c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Select(%q) = %v, want an error containing %q", c.spec, err, c.want)
		}
	}
	if _, err := gpu.Select(nil, "auto"); err == nil || !strings.Contains(err.Error(), "found no GPU") {
		t.Errorf("Select(none, auto) = %v", err)
	}
	if _, err := gpu.Select(nil, "0"); err == nil || !strings.Contains(err.Error(), "it has none") {
		t.Errorf("Select(none, 0) = %v", err)
	}
}

func TestModel(t *testing.T) {
	all := fourGPUs(t)
	if m := gpu.Model(nil); m != "" {
		t.Errorf("Model(none) = %q", m)
	}
	all[2].Name = "NVIDIA H100 80GB HBM3"
	if m := gpu.Model(all); m != gpu.Mixed {
		t.Errorf("Model(mixed) = %q", m)
	}
	if m := gpu.Model(all[2:3]); m != "NVIDIA H100 80GB HBM3" {
		t.Errorf("Model(one) = %q", m)
	}
	if s := gpu.UUIDs(all[:2]); s != testenv.FakeGPUUUID(0)+","+testenv.FakeGPUUUID(1) {
		t.Errorf("UUIDs = %q", s)
	}
}

func TestDetectTimeout(t *testing.T) {
	dir := testenv.FakeNvidiaSMIScript(t, "exec sleep 30\n")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := gpu.Detect(ctx, filepath.Join(dir, "nvidia-smi"))
	if err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("Detect of a hung nvidia-smi: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Detect waited %s for a hung nvidia-smi", took)
	}
}
