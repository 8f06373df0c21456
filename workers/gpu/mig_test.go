package gpu_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/workers/gpu"
)

// A listing as drivers print it: the second GPU is split into two
// instances, the third is whole; older drivers name instances
// MIG-GPU-<uuid>/<gi>/<ci>.
const migList = `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-aa)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-bb)
  MIG 3g.40gb     Device  0: (UUID: MIG-0f9c1d2e-aaaa-bbbb-cccc-0123456789ab)
  MIG 1g.10gb+me  Device  1: (UUID: MIG-GPU-bb/7/0)
GPU 2: NVIDIA A100-SXM4-80GB (UUID: GPU-cc)
`

func TestParseList(t *testing.T) {
	migs, err := gpu.ParseList([]byte(migList))
	if err != nil {
		t.Fatal(err)
	}
	want := []gpu.MIGInstance{{Profile: "3g.40gb", Device: 0, UUID: "MIG-0f9c1d2e-aaaa-bbbb-cccc-0123456789ab"},
		{Profile: "1g.10gb+me", Device: 1, UUID: "MIG-GPU-bb/7/0"}}
	if len(migs) != 1 || len(migs["GPU-bb"]) != 2 || migs["GPU-bb"][0] != want[0] || migs["GPU-bb"][1] != want[1] {
		t.Fatalf("ParseList = %+v, want GPU-bb's two instances %+v", migs, want)
	}
	for _, c := range []struct{ out, want string }{
		{"  MIG 1g.10gb Device 0: (UUID: MIG-ab)\n", "line 1 \"MIG 1g.10gb Device 0: (UUID: MIG-ab)\": a MIG instance before any GPU"},
		{"GPU 0: A100 (UUID: GPU-aa)\n  MIG 1g.10gb Device x: (UUID: MIG-ab)\n", `line 2 "MIG 1g.10gb Device x: (UUID: MIG-ab)": device "x:"`},
		{"GPU 0: A100 (UUID: GPU-aa)\n  MIG 1g.10gb Device 0: (UUID: GPU-ab)\n", "line 2 \"MIG 1g.10gb Device 0: (UUID: GPU-ab)\": no MIG UUID"},
		{"GPU 0: A100 (no uuid)\n", `line 1 "GPU 0: A100 (no uuid)": no GPU UUID`},
	} {
		if _, err := gpu.ParseList([]byte(c.out)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseList(%q) = %v, want an error containing %q", c.out, err, c.want)
		}
	}
}

func TestSplitMIG(t *testing.T) {
	devs, err := gpu.Parse([]byte("0, GPU-aa, NVIDIA A100-SXM4-80GB, 81920 MiB\n1, GPU-bb, NVIDIA A100-SXM4-80GB, 81920 MiB\n2, GPU-cc, NVIDIA A100-SXM4-80GB, 81920 MiB\n"))
	if err != nil {
		t.Fatal(err)
	}
	migs, err := gpu.ParseList([]byte(migList))
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.SplitMIG(devs, migs)
	if err != nil {
		t.Fatal(err)
	}
	want := []gpu.Device{
		devs[0],
		{Index: 1, UUID: "MIG-0f9c1d2e-aaaa-bbbb-cccc-0123456789ab", Name: "NVIDIA A100-SXM4-80GB MIG 3g.40gb", MemoryMiB: 40960, Parent: "GPU-bb"},
		{Index: 1, UUID: "MIG-GPU-bb/7/0", Name: "NVIDIA A100-SXM4-80GB MIG 1g.10gb+me", MemoryMiB: 10240, Parent: "GPU-bb"},
		devs[2],
	}
	if len(got) != len(want) {
		t.Fatalf("SplitMIG = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("device %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := gpu.SplitMIG(devs, map[string][]gpu.MIGInstance{"GPU-aa": {{UUID: "MIG-1"}}, "GPU-bb": {{UUID: "MIG-1"}}}); err == nil {
		t.Error("an instance listed under two GPUs is accepted")
	}
}

// TestDetectMIG runs a stand-in nvidia-smi (testenv; there are no GPUs
// here) for four A100s, GPU 1 split into three instances: Detect offers
// GPU 0, the three instances by their MIG UUIDs, and GPUs 2 and 3; Select
// takes an instance by its UUID, a split GPU's instances by its index or
// UUID.
func TestDetectMIG(t *testing.T) {
	dir := testenv.FakeNvidiaSMIMIG(t, 4, map[int][]string{1: {"3g.40gb", "2g.20gb", "1g.10gb"}})
	devs, err := gpu.Detect(context.Background(), filepath.Join(dir, "nvidia-smi"))
	if err != nil {
		t.Fatal(err)
	}
	var uuids []string
	for _, d := range devs {
		uuids = append(uuids, d.UUID)
	}
	want := []string{testenv.FakeGPUUUID(0), testenv.FakeMIGUUID(1, 0), testenv.FakeMIGUUID(1, 1), testenv.FakeMIGUUID(1, 2),
		testenv.FakeGPUUUID(2), testenv.FakeGPUUUID(3)}
	if strings.Join(uuids, " ") != strings.Join(want, " ") {
		t.Fatalf("Detect offers\n%v\nwant\n%v", uuids, want)
	}
	if d := devs[2]; d.Index != 1 || d.Parent != testenv.FakeGPUUUID(1) || d.MemoryMiB != 20480 || d.Name != testenv.FakeGPUModel+" MIG 2g.20gb" {
		t.Errorf("instance 1 of GPU 1: %+v", d)
	}
	for _, c := range []struct {
		spec string
		want int
	}{
		{"1", 3}, {"0,1", 4}, {testenv.FakeGPUUUID(1), 3}, {testenv.FakeMIGUUID(1, 2), 1},
		{testenv.FakeMIGUUID(1, 2) + "," + testenv.FakeGPUUUID(3), 2}, {"auto", 6},
	} {
		got, err := gpu.Select(devs, c.spec)
		if err != nil || len(got) != c.want {
			t.Errorf("Select(%q) = %d devices (%v), want %d", c.spec, len(got), err, c.want)
		}
	}
	if _, err := gpu.Select(devs, testenv.FakeGPUUUID(1)+","+testenv.FakeMIGUUID(1, 0)); err == nil || !strings.Contains(err.Error(), "named twice") {
		t.Errorf("a split GPU and one of its instances: %v, want an error saying named twice", err)
	}
	// A machine without MIG still lists each GPU once.
	plain, err := gpu.Detect(context.Background(), filepath.Join(testenv.FakeNvidiaSMI(t, 2), "nvidia-smi"))
	if err != nil || len(plain) != 2 || plain[0].Parent != "" {
		t.Errorf("Detect without MIG: %+v %v", plain, err)
	}
}

// TestMIGInstancesAreDevicesOfTheirOwn: the allocator gives the instances
// of one GPU to different jobs, whole or as shares, like GPUs.
func TestMIGInstancesAreDevicesOfTheirOwn(t *testing.T) {
	devs, err := gpu.Detect(context.Background(), filepath.Join(testenv.FakeNvidiaSMIMIG(t, 1, map[int][]string{0: {"3g.40gb", "3g.40gb"}}), "nvidia-smi"))
	if err != nil {
		t.Fatal(err)
	}
	a := gpu.NewAllocator(devs)
	w, ok := a.Take("whole", 1)
	if !ok || w[0].UUID != testenv.FakeMIGUUID(0, 0) {
		t.Fatalf("Take = %+v %v, want the first instance", w, ok)
	}
	s, _, ok := a.TakeShare("half", 500, true)
	if !ok || s.UUID != testenv.FakeMIGUUID(0, 1) {
		t.Fatalf("TakeShare = %+v %v, want the second instance", s, ok)
	}
}
