//go:build linux

package isolation

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// writeFile writes a control file. It creates the file if missing only so
// that tests can run the same code over a plain directory; a real cgroup
// file always exists.
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// readKeyed reads "key value" lines (cpu.stat, memory.events, oom_control).
func readKeyed(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			out[f[0]] = v
		}
	}
	return out, nil
}

// readPIDs lists the processes in a cgroup.procs file.
func readPIDs(path string) []int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// removeTree removes a cgroup directory and every cgroup below it, deepest
// first. A cgroup directory is removed with rmdir even though it lists
// control files; a plain directory (a test's fake root) needs RemoveAll.
func removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, removeTree(filepath.Join(dir, e.Name())))
		}
	}
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		if isCgroupFS(dir) {
			errs = append(errs, &os.PathError{Op: "rmdir", Path: dir, Err: err})
		} else if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func isCgroupFS(path string) bool {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return false
	}
	return st.Type == unix.CGROUP_SUPER_MAGIC || st.Type == unix.CGROUP2_SUPER_MAGIC
}

// treePIDs lists the processes in dir and every cgroup below it.
func treePIDs(dir string) []int {
	pids := readPIDs(filepath.Join(dir, "cgroup.procs"))
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			pids = append(pids, treePIDs(filepath.Join(dir, e.Name()))...)
		}
	}
	return pids
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
