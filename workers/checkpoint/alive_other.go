//go:build !unix

package checkpoint

// ProcessAlive cannot tell here, so every owner counts as running: a
// staging directory is then left rather than pulled from under a restore.
func ProcessAlive(pid int) bool { return true }
