package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FakeGPUModel is the model the stand-in nvidia-smi reports.
const FakeGPUModel = "NVIDIA A100-SXM4-80GB"

// FakeGPUUUID is the UUID the stand-in nvidia-smi gives GPU i.
func FakeGPUUUID(i int) string {
	return fmt.Sprintf("GPU-%08x-5a1e-4c0d-9b7f-%012x", 0x9a3b0000+i, 0xa100+i)
}

// FakeNvidiaSMIOutput is what `nvidia-smi
// --query-gpu=index,uuid,name,memory.total --format=csv,noheader` prints on
// a machine with n A100 80GB GPUs.
func FakeNvidiaSMIOutput(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d, %s, %s, 81920 MiB\n", i, FakeGPUUUID(i), FakeGPUModel)
	}
	return b.String()
}

// FakeMIGUUID is the UUID the stand-in nvidia-smi gives MIG instance k
// of GPU i.
func FakeMIGUUID(i, k int) string {
	return fmt.Sprintf("MIG-%08x-7c3d-4e1f-8a2b-%012x", 0x3c1a0000+i, 0x100*i+k)
}

// FakeNvidiaSMIList is what `nvidia-smi -L` prints on a machine with n
// A100 80GB GPUs, GPU i split into MIG instances of the profiles mig[i]
// (such as "1g.10gb"; none: a whole GPU).
func FakeNvidiaSMIList(n int, mig map[int][]string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "GPU %d: %s (UUID: %s)\n", i, FakeGPUModel, FakeGPUUUID(i))
		for k, p := range mig[i] {
			fmt.Fprintf(&b, "  MIG %-11s Device %2d: (UUID: %s)\n", p, k, FakeMIGUUID(i, k))
		}
	}
	return b.String()
}

// FakeNvidiaSMI writes a stand-in nvidia-smi for a machine with n A100
// GPUs into a new temporary directory and returns the directory: put it
// first on PATH (t.Setenv("PATH", dir+":"+os.Getenv("PATH"))) and Ballast
// finds n GPUs. There are no GPUs on the test machines; the script only
// prints what nvidia-smi prints for the two calls Ballast makes: the list
// for -L, and for any other arguments the query of GPUs.
func FakeNvidiaSMI(t testing.TB, n int) string {
	t.Helper()
	return FakeNvidiaSMIMIG(t, n, nil)
}

// FakeNvidiaSMIMIG is FakeNvidiaSMI on a machine whose GPU i is split
// into MIG instances of the profiles mig[i]: the query lists the GPUs, the
// list (-L) their instances too, as nvidia-smi does.
func FakeNvidiaSMIMIG(t testing.TB, n int, mig map[int][]string) string {
	t.Helper()
	return FakeNvidiaSMIScript(t, "if [ \"$1\" = -L ]; then\ncat <<'OUT'\n"+FakeNvidiaSMIList(n, mig)+"OUT\nelse\ncat <<'OUT'\n"+
		FakeNvidiaSMIOutput(n)+"OUT\nfi\n")
}

// FakeNvidiaSMIScript writes a stand-in nvidia-smi running the shell
// script body (to fake a broken driver, say) and returns its directory.
func FakeNvidiaSMIScript(t testing.TB, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// FakeGPUPath puts a stand-in nvidia-smi for n GPUs first on the test's
// PATH (so the test may not be parallel) and returns its directory.
func FakeGPUPath(t testing.TB, n int) string {
	t.Helper()
	dir := FakeNvidiaSMI(t, n)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}
