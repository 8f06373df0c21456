package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at link time by release builds
// (-ldflags "-X github.com/ballastdev/ballast/internal/cli.version=v1.2.3");
// without it the module version from the build info is shown, which is
// "(devel)" for a build from a checkout.
var version = ""

// versionLine says which build this is: version, commit (with its time, and
// "modified" when the tree had uncommitted changes), and the Go toolchain,
// the three things a bug report needs.
func versionLine() string {
	v, commit, when, modified := version, "unknown", "", false
	goVersion := runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if when != "" {
		commit += " " + when
	}
	if modified {
		commit += " modified"
	}
	return fmt.Sprintf("ballast %s\ncommit %s\n%s %s/%s", v, commit, goVersion, runtime.GOOS, runtime.GOARCH)
}
