//go:build unix && !linux

package provider

import "syscall"

// workerAttr puts a local worker in its own process group. Outside Linux
// there is no parent-death signal, so Close must run to stop the children.
func workerAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
