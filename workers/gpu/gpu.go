// Package gpu finds a machine's NVIDIA GPUs, picks the ones a worker offers
// (the --gpus flag) and hands them out to jobs without overlap.
//
// On a GPU worker a slot is a GPU, or a MIG instance of one (mig.go): a
// job holding k slots is bound to k devices, which it sees through
// CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES. Jobs that ask for a
// share of one GPU are packed onto a device together (share.go). Everything here is pure except
// Detect, which runs nvidia-smi; nothing starts a goroutine.
package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Device is one GPU as nvidia-smi reports it.
type Device struct {
	// Index is nvidia-smi's index (the PCI bus order by default).
	Index int
	// UUID is the stable name ("GPU-..."): what a job is bound by, since
	// indices follow CUDA_DEVICE_ORDER and may differ between tools.
	UUID string
	// Name is the model ("NVIDIA A100-SXM4-80GB").
	Name string
	// MemoryMiB is the device's total memory.
	MemoryMiB int
	// Parent is, for a MIG instance, the UUID of the GPU it is part of
	// ("" for a whole GPU); Index is then the parent's.
	Parent string
}

// QueryArgs are the arguments Detect passes to nvidia-smi; Parse reads
// their output.
var QueryArgs = []string{"--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader"}

// DetectTimeout bounds one nvidia-smi run: it answers in well under a
// second on a healthy machine, and hangs when the driver is wedged.
const DetectTimeout = 15 * time.Second

// Parse reads the output of nvidia-smi with QueryArgs: one line per GPU,
// "index, uuid, name, memory.total", the memory in MiB with or without the
// " MiB" unit. Blank lines and spaces around fields are ignored; anything
// else that is not a well-formed line is an error naming the line. A name
// holding a comma is kept whole: index and uuid come first and memory last.
// Duplicate indices or UUIDs are errors too.
func Parse(out []byte) ([]Device, error) {
	var devs []Device
	seenIndex := map[int]int{}
	seenUUID := map[string]int{}
	for i, raw := range strings.Split(string(out), "\n") {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		index, rest, ok1 := strings.Cut(line, ",")
		uuid, rest, ok2 := strings.Cut(rest, ",")
		cut := strings.LastIndexByte(rest, ',')
		if !ok1 || !ok2 || cut < 0 {
			return nil, fmt.Errorf("gpu.Parse: line %d %q: %d fields, want 4 (index, uuid, name, memory.total)", n, line, strings.Count(line, ",")+1)
		}
		name, mem := rest[:cut], rest[cut+1:]
		d, err := parseDevice(strings.TrimSpace(index), strings.TrimSpace(uuid), strings.TrimSpace(name), strings.TrimSpace(mem))
		if err != nil {
			return nil, fmt.Errorf("gpu.Parse: line %d %q: %w", n, line, err)
		}
		if m, dup := seenIndex[d.Index]; dup {
			return nil, fmt.Errorf("gpu.Parse: line %d %q: index %d is also on line %d", n, line, d.Index, m)
		}
		if m, dup := seenUUID[d.UUID]; dup {
			return nil, fmt.Errorf("gpu.Parse: line %d %q: uuid %s is also on line %d", n, line, d.UUID, m)
		}
		seenIndex[d.Index], seenUUID[d.UUID] = n, n
		devs = append(devs, d)
	}
	slices.SortFunc(devs, func(a, b Device) int { return a.Index - b.Index })
	return devs, nil
}

func parseDevice(index, uuid, name, mem string) (Device, error) {
	var d Device
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 {
		return d, fmt.Errorf("index %q is not a non-negative integer", index)
	}
	if !validUUID(uuid) {
		return d, fmt.Errorf("uuid %q does not look like GPU-<hex and dashes>", uuid)
	}
	if name == "" || strings.HasPrefix(name, "[") { // "[N/A]", "[Unknown Error]"
		return d, fmt.Errorf("name %q is not a GPU model", name)
	}
	num, _ := strings.CutSuffix(mem, " MiB")
	m, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil || m <= 0 {
		return d, fmt.Errorf("memory.total %q is not a positive number of MiB (like \"81920 MiB\")", mem)
	}
	return Device{Index: i, UUID: uuid, Name: name, MemoryMiB: m}, nil
}

// validUUID accepts what nvidia-smi prints for a GPU: "GPU-" and then hex
// digits and dashes.
func validUUID(s string) bool {
	rest, ok := strings.CutPrefix(s, "GPU-")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}

// ErrNoNvidiaSMI is returned (wrapped) by Detect when nvidia-smi cannot be
// found.
var ErrNoNvidiaSMI = errors.New("nvidia-smi not found")

// Detect runs nvidia-smi (path "" = "nvidia-smi" on PATH) with QueryArgs
// and then ListArgs, each within DetectTimeout, and returns the GPUs, each
// GPU split into MIG instances replaced by its instances (see mig.go). A
// missing program, a failure (its exit status and what it printed on
// stderr) and a timeout each get an error saying so.
func Detect(ctx context.Context, path string) ([]Device, error) {
	if path == "" {
		path = "nvidia-smi"
	}
	prog, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("gpu.Detect: %w (%q: %v): this machine has no NVIDIA driver installed, or it is not on PATH", ErrNoNvidiaSMI, path, err)
	}
	out, err := run(ctx, prog, QueryArgs)
	if err != nil {
		return nil, err
	}
	devs, err := Parse(out)
	if err != nil {
		return nil, fmt.Errorf("gpu.Detect: output of %s: %w", prog, err)
	}
	if len(devs) == 0 {
		return devs, nil
	}
	out, err = run(ctx, prog, ListArgs)
	if err != nil {
		return nil, err
	}
	migs, err := ParseList(out)
	if err != nil {
		return nil, fmt.Errorf("gpu.Detect: output of %s %s: %w", prog, strings.Join(ListArgs, " "), err)
	}
	return SplitMIG(devs, migs)
}

// run runs prog with args within DetectTimeout and returns its stdout.
func run(ctx context.Context, prog string, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, DetectTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("gpu.Detect: %s did not answer in time (at most %s; %v): the driver may be wedged", prog, DetectTimeout, ctx.Err())
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String()) // nvidia-smi prints some failures on stdout
		}
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		return nil, fmt.Errorf("gpu.Detect: %s failed (%v): %s", prog, err, msg)
	}
	return stdout.Bytes(), nil
}

// Select picks the devices the --gpus flag names out of the detected ones:
// "auto" is all of them (at least one must exist); "0,1,3" is by index;
// "GPU-...,GPU-..." is by UUID. An index or the UUID of a GPU split into
// MIG instances gives all its instances; "MIG-..." gives one. One list
// is either indices or UUIDs, each named once, each present on the
// machine. The result is in index order.
//
// Select needs the detected devices even for an explicit list: a worker
// binds jobs by UUID, and an index nvidia-smi did not confirm could name a
// device that is not there, so a GPU worker starts only where nvidia-smi
// answers.
func Select(all []Device, spec string) ([]Device, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, errors.New(`gpus: empty; use "auto", indices like "0,1" or UUIDs like "GPU-..."`)
	}
	if spec == "auto" {
		if len(all) == 0 {
			return nil, errors.New("gpus: auto found no GPU on this machine (nvidia-smi lists none)")
		}
		return slices.Clone(all), nil
	}
	items := strings.Split(spec, ",")
	byUUID := isUUID(strings.TrimSpace(items[0]))
	picked := map[string]bool{}
	var out []Device
	for k, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("gpus: item %d of %q is empty", k+1, spec)
		}
		var ds []Device
		if byUUID {
			if !isUUID(item) {
				return nil, fmt.Errorf("gpus: %q is not a UUID; a list is either all indices or all UUIDs", item)
			}
			// A GPU split into MIG instances is named by its own UUID too,
			// and gives them all.
			ds = findAll(all, func(d Device) bool { return strings.EqualFold(d.UUID, item) || strings.EqualFold(d.Parent, item) })
			if len(ds) == 0 {
				return nil, fmt.Errorf("gpus: no GPU %s on this machine (it has %s)", item, list(all, true))
			}
		} else {
			i, err := strconv.Atoi(item)
			if isUUID(item) {
				return nil, fmt.Errorf("gpus: %q is not an index; a list is either all indices or all UUIDs", item)
			}
			if err != nil || i < 0 {
				return nil, fmt.Errorf("gpus: %q is neither an index (0, 1, ...) nor a UUID (GPU-... or MIG-...), nor auto", item)
			}
			ds = findAll(all, func(d Device) bool { return d.Index == i })
			if len(ds) == 0 {
				return nil, fmt.Errorf("gpus: no GPU with index %d on this machine (it has %s)", i, list(all, false))
			}
		}
		for _, d := range ds {
			if picked[d.UUID] {
				return nil, fmt.Errorf("gpus: %s is named twice", item)
			}
			picked[d.UUID] = true
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b Device) int { return a.Index - b.Index })
	return out, nil
}

// isUUID reports whether s names a device by UUID: a GPU's or a MIG
// instance's.
func isUUID(s string) bool {
	return strings.HasPrefix(s, "GPU-") || strings.HasPrefix(s, "MIG-")
}

func findAll(all []Device, match func(Device) bool) []Device {
	var out []Device
	for _, d := range all {
		if match(d) {
			out = append(out, d)
		}
	}
	return out
}

func list(all []Device, uuids bool) string {
	if len(all) == 0 {
		return "none"
	}
	var s []string
	for _, d := range all {
		v := strconv.Itoa(d.Index)
		if uuids {
			v = d.UUID
		}
		if !slices.Contains(s, v) { // a GPU's MIG instances share its index
			s = append(s, v)
		}
	}
	return strings.Join(s, ", ")
}

// Mixed is Model's answer for devices of more than one model.
const Mixed = "mixed"

// Model is the devices' model name when they all share one ("" for none,
// Mixed otherwise): a worker's gpu_model label.
func Model(devs []Device) string {
	if len(devs) == 0 {
		return ""
	}
	for _, d := range devs[1:] {
		if d.Name != devs[0].Name {
			return Mixed
		}
	}
	return devs[0].Name
}

// UUIDs joins the devices' UUIDs with commas, as CUDA_VISIBLE_DEVICES and
// NVIDIA_VISIBLE_DEVICES take them.
func UUIDs(devs []Device) string {
	s := make([]string, len(devs))
	for i, d := range devs {
		s[i] = d.UUID
	}
	return strings.Join(s, ",")
}
