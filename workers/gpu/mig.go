package gpu

import (
	"fmt"
	"strconv"
	"strings"
)

// MIG (Multi-Instance GPU) splits an A100, H100 or later GPU into
// instances with compute and memory of their own. CUDA sees each as a
// device, bound by its own UUID ("MIG-..."), and nvidia-smi's query of
// GPUs lists only the parent. So Detect also asks for the list
// (nvidia-smi -L), which shows each GPU's instances under it:
//
//	GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5a1e...)
//	  MIG 3g.40gb     Device  0: (UUID: MIG-0f9c...)
//	  MIG 1g.10gb     Device  1: (UUID: MIG-77d2...)
//
// and offers each instance as a device of its own in place of its parent:
// a job bound to an instance cannot touch the others, which is what a
// slot must be. Jobs never get the parent of an instance: binding it
// would hand them every instance at once.

// ListArgs are the arguments Detect passes to nvidia-smi for the list of
// GPUs and their MIG instances; ParseList reads their output.
var ListArgs = []string{"-L"}

// MIGInstance is one MIG instance as nvidia-smi -L lists it.
type MIGInstance struct {
	// Profile is the instance's size, such as "1g.10gb".
	Profile string
	// Device is its number among its parent's instances.
	Device int
	UUID   string
}

// ParseList reads nvidia-smi -L: the MIG instances of each GPU, by the
// parent's UUID. GPUs without instances are left out. Lines it does not
// know are skipped (the list is made for people, and drivers add to it);
// a MIG line before any GPU line, or one it cannot read, is an error
// naming the line.
func ParseList(out []byte) (map[string][]MIGInstance, error) {
	migs := map[string][]MIGInstance{}
	parent := ""
	for i, raw := range strings.Split(string(out), "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case strings.HasPrefix(line, "GPU "):
			u, ok := listUUID(line)
			if !ok || !validUUID(u) {
				return nil, fmt.Errorf("line %d %q: no GPU UUID in it", i+1, line)
			}
			parent = u
		case strings.HasPrefix(line, "MIG "):
			m, err := parseMIG(line)
			if err != nil {
				return nil, fmt.Errorf("line %d %q: %w", i+1, line, err)
			}
			if parent == "" {
				return nil, fmt.Errorf("line %d %q: a MIG instance before any GPU", i+1, line)
			}
			migs[parent] = append(migs[parent], m)
		}
	}
	return migs, nil
}

// parseMIG reads "MIG 1g.10gb Device 0: (UUID: MIG-...)".
func parseMIG(line string) (MIGInstance, error) {
	f := strings.Fields(line)
	if len(f) < 4 || f[2] != "Device" {
		return MIGInstance{}, fmt.Errorf(`want "MIG PROFILE Device N: (UUID: MIG-...)"`)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(f[3], ":"))
	if err != nil || n < 0 {
		return MIGInstance{}, fmt.Errorf("device %q is not a non-negative integer", f[3])
	}
	u, ok := listUUID(line)
	if !ok || !validMIGUUID(u) {
		return MIGInstance{}, fmt.Errorf("no MIG UUID in it")
	}
	return MIGInstance{Profile: f[1], Device: n, UUID: u}, nil
}

// listUUID is what follows "(UUID: " up to ")".
func listUUID(line string) (string, bool) {
	_, rest, ok := strings.Cut(line, "(UUID: ")
	if !ok {
		return "", false
	}
	u, _, ok := strings.Cut(rest, ")")
	return strings.TrimSpace(u), ok && u != ""
}

// validMIGUUID accepts "MIG-" and hex digits and dashes, and the form of
// drivers before R470, "MIG-GPU-<uuid>/<gi>/<ci>".
func validMIGUUID(s string) bool {
	rest, ok := strings.CutPrefix(s, "MIG-")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-' || c == '/' || c == 'G' || c == 'P' || c == 'U') {
			return false
		}
	}
	return true
}

// SplitMIG replaces each GPU of devs that migs splits into instances by
// its instances, in its place: Index and model name from the parent, the
// profile after the name ("NVIDIA A100-SXM4-80GB MIG 1g.10gb"), memory
// from the profile, Parent its UUID. A UUID seen twice is an error.
func SplitMIG(devs []Device, migs map[string][]MIGInstance) ([]Device, error) {
	var out []Device
	seen := map[string]bool{}
	for _, d := range devs {
		seen[d.UUID] = true
		ms := migs[d.UUID]
		if len(ms) == 0 {
			out = append(out, d)
			continue
		}
		for _, m := range ms {
			if seen[m.UUID] {
				return nil, fmt.Errorf("gpu.Detect: MIG instance %s is listed twice", m.UUID)
			}
			seen[m.UUID] = true
			out = append(out, Device{Index: d.Index, UUID: m.UUID, Name: d.Name + " MIG " + m.Profile,
				MemoryMiB: profileMemory(m.Profile, d.MemoryMiB), Parent: d.UUID})
		}
	}
	return out, nil
}

// profileMemory is the memory a MIG profile names ("3g.40gb" is 40 GiB),
// or else the parent's (a profile this code cannot read still runs jobs).
func profileMemory(profile string, parent int) int {
	_, mem, ok := strings.Cut(profile, ".")
	num, _, ok2 := strings.Cut(mem, "gb") // "1g.10gb+me" carries a suffix
	gb, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil || gb <= 0 {
		return parent
	}
	return gb * 1024
}
