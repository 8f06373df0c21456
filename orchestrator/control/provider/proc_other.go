//go:build !unix

package provider

import (
	"os"
	"syscall"
)

// groupAttr has no process groups to set up here.
func groupAttr() *syscall.SysProcAttr { return nil }

// workerAttr has nothing to set up here; Close must run to stop children.
func workerAttr() *syscall.SysProcAttr { return nil }

// terminate cannot ask for a drain without SIGTERM, so it stops p at once.
func terminate(p *os.Process) error { return p.Kill() }

// forceStop kills p.
func forceStop(p *os.Process) error { return p.Kill() }
