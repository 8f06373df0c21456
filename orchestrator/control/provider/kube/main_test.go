package kube_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The informers run goroutines; Close must stop every one.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
