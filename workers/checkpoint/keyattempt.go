package checkpoint

import (
	"path"
	"strconv"
	"strings"
)

// KeyAttempt is the attempt that wrote the manifest a committed key names
// (see manifestKey), and false for a key not of that form. A new attempt
// restores only checkpoints of earlier attempts: the members of a gang
// then all restore the same one, even if member 0 commits a new
// checkpoint while another member is still restoring.
func KeyAttempt(key string) (int, bool) {
	base := path.Base(key)
	head, _, ok := strings.Cut(base, "-")
	if !ok || !strings.Contains(key, "/manifests/") {
		return 0, false
	}
	n, err := strconv.Atoi(head)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// Earlier keeps the keys (newest first) committed by attempts before
// attempt, in order; a key KeyAttempt cannot read is kept (Restore then
// judges it).
func Earlier(keys []string, attempt int) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if a, ok := KeyAttempt(k); ok && a >= attempt {
			continue
		}
		out = append(out, k)
	}
	return out
}
