package queues_test

import (
	"strings"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

// TestEveryKeyCarriesTheNamespaceTag: Redis Cluster hashes only what is
// between the first "{" and the next "}", so every key must start with
// the namespace's tag; then all of them share one slot.
func TestEveryKeyCarriesTheNamespaceTag(t *testing.T) {
	for _, name := range []string{"", "eu-1"} {
		n := queues.NewNamespace(name)
		tag := "{" + n.Name() + "}"
		if n.HashTag() != tag {
			t.Errorf("HashTag() = %q, want %q", n.HashTag(), tag)
		}
		for _, k := range n.AllKeys() {
			if !strings.HasPrefix(k, tag+":") {
				t.Errorf("key %q does not start with %s:", k, tag)
			}
		}
	}
}
