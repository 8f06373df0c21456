// Package logs keeps the output lines of job attempts in Redis: workers
// append them as the job writes them, and the API and the CLI read them
// page by page or follow them.
//
// It owns one key per job, the stream Namespace.JobLog(id) ("{NAME}:job:ID:log"),
// trimmed to about as many lines as the worker is told to keep. It writes
// nothing else and reads nothing else.
//
// It is a package of its own because nothing about a job's state depends
// on its log: no script of the kernel (queues) reads a line, and a log
// write needs no fencing, so a reader of this package sees all there is
// to job output. The kernel's scripts that end a job (finish, cancel,
// the requeues of a lost worker's jobs) still set the stream's expiry
// together with the record's, as the log must go when its record goes;
// that is the only use the kernel makes of this key.
package logs
