package policy

import (
	"flag"
	"os"
	"testing"
)

// TestMain raises rapid's default from 100 to 1,000 cases per property:
// the rarer rules (migration needs a cool snapshot with elastic work to
// move) only show up every few dozen cases. An explicit -rapid.checks wins.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set {
		if err := flag.Set("rapid.checks", "1000"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
