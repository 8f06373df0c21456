//go:build !linux

package workers

// GuardProcess does nothing outside Linux, which has no PR_SET_DUMPABLE.
func GuardProcess() error { return nil }
