// Package isolation enforces QoS groups on a worker with Linux cgroups: a
// cgroup per group with a child per job, under ballast/WORKER_ID, on cgroup
// v2 (cpu.max, memory.max, io.max) or v1 (the cpu, cpuacct, memory, blkio
// and freezer hierarchies). It reports exactly which limits are in force and
// why the others are not, reads each job's own counters when it ends, ends a
// job's whole tree through its cgroup, and removes what a dead worker left.
//
// It is an adapter: which group a job lands in is decided by jobs.QoS.
package isolation
