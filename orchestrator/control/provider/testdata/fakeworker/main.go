// Command fakeworker stands in for "ballast worker" in the provider tests,
// so they exercise real child processes without the real worker's
// dependencies (Redis, NATS).
//
// It records its arguments in $FAKEWORKER_DIR/ID.args (ID is the value of
// --id), which also tells a test it is up. On SIGTERM it writes ID.draining
// and exits 0 after a short drain. FAKEWORKER_IGNORE_TERM=1 makes it ignore
// SIGTERM, so only SIGKILL stops it; FAKEWORKER_EXIT=N makes it complain on
// stderr and exit with code N at once.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lifetime is a safety net: a fake worker that nobody stops (a test bug on
// a system without a parent-death signal) goes away by itself.
const lifetime = time.Minute

func main() {
	dir := os.Getenv("FAKEWORKER_DIR")
	id := "noid"
	for i, a := range os.Args {
		if a == "--id" && i+1 < len(os.Args) {
			id = os.Args[i+1]
		}
	}

	// Signal handling is set up before the args file announces the worker,
	// so a test that releases it as soon as it sees the file is not early.
	term := make(chan os.Signal, 1)
	if os.Getenv("FAKEWORKER_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(term, syscall.SIGTERM)
	}
	writeFile(filepath.Join(dir, id+".args"), strings.Join(os.Args[1:], "\n"))

	if s := os.Getenv("FAKEWORKER_EXIT"); s != "" {
		code, _ := strconv.Atoi(s)
		fmt.Fprintln(os.Stderr, "fakeworker: starting")
		fmt.Fprintln(os.Stderr, "fakeworker: boom")
		os.Exit(code)
	}

	select {
	case <-term:
		writeFile(filepath.Join(dir, id+".draining"), "draining")
		fmt.Println("draining")
		time.Sleep(100 * time.Millisecond) // a drain takes a moment
		os.Exit(0)
	case <-time.After(lifetime):
		os.Exit(4)
	}
}

// writeFile writes through a rename, so a test polling for the file never
// reads it half written.
func writeFile(path, content string) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fakeworker:", err)
		os.Exit(5)
	}
	if err := os.Rename(tmp, path); err != nil {
		fmt.Fprintln(os.Stderr, "fakeworker:", err)
		os.Exit(5)
	}
}
