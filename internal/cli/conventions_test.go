package cli

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestVersionNamesBuildCommitAndGo(t *testing.T) {
	code, out, _ := run(t, "--version")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"ballast ", "\ncommit ", runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH} {
		if !strings.Contains(out, want) {
			t.Errorf("--version %q lacks %q", out, want)
		}
	}
}

// TestHelpCommandIsCommandHelp: for every command, `help CMD` and
// `CMD --help` print the same text, on stdout, exit 0, and that text is
// the command's, not the top-level list.
func TestHelpCommandIsCommandHelp(t *testing.T) {
	_, top, _ := run(t, "help")
	for _, name := range slices.Sorted(maps.Keys(commands())) {
		c1, viaHelp, e1 := run(t, "help", name)
		c2, viaFlag, e2 := run(t, name, "--help")
		if c1 != 0 || c2 != 0 {
			t.Errorf("%s: exit %d and %d (stderr %q %q)", name, c1, c2, e1, e2)
		}
		if viaHelp != viaFlag {
			t.Errorf("%s: help %s and %s --help differ:\n%s\n---\n%s", name, name, name, viaHelp, viaFlag)
		}
		if viaHelp == top || !strings.Contains(viaHelp, "ballast "+name) {
			t.Errorf("%s: help is not the command's:\n%s", name, viaHelp)
		}
	}
	// A verb's help is reached the same two ways.
	if _, a, _ := run(t, "help", "jobs", "show"); a == "" || !strings.Contains(a, "jobs show") {
		t.Errorf("help jobs show: %q", a)
	}
}

func TestDidYouMean(t *testing.T) {
	code, _, errOut := run(t, "sbumit", "hello")
	if code != 2 || !strings.Contains(errOut, `unknown command "sbumit": did you mean submit?`) {
		t.Errorf("sbumit: exit %d, %q", code, errOut)
	}
	if _, _, errOut := run(t, "templ"); !strings.Contains(errOut, "did you mean templates?") {
		t.Errorf("a prefix of one command: %q", errOut)
	}
	code, _, errOut = run(t, "submit", "--wiat", "hello")
	if code != 2 || !strings.Contains(errOut, "did you mean --wait?") || strings.Count(errOut, "-wiat") != 1 {
		t.Errorf("--wiat: exit %d, %q", code, errOut)
	}
	if _, _, errOut := run(t, "frobnicate"); strings.Contains(errOut, "did you mean") {
		t.Errorf("a word near nothing got a suggestion: %q", errOut)
	}
}

// TestCompletionScripts checks each script names the commands and a
// command's own flags (read from its flag set), and that bash, and zsh or
// fish where installed, parse it.
func TestCompletionScripts(t *testing.T) {
	for _, c := range []struct {
		shell string
		want  []string
		check []string // a syntax check, when the shell is installed
	}{
		{"bash", []string{"complete -o filenames -F _ballast ballast", "submit) COMPREPLY", "--wait", "jobs) COMPREPLY=($(compgen -W \"list show logs\""}, []string{"bash", "-n"}},
		{"zsh", []string{"compdef _ballast ballast", "'--wait:follow", "'templates:list the templates"}, []string{"zsh", "-n"}},
		{"fish", []string{"-a submit -d", "'__fish_seen_subcommand_from submit' -l wait", "-o o -d"}, []string{"fish", "--no-execute"}},
	} {
		code, out, errOut := run(t, "completion", c.shell)
		if code != 0 {
			t.Fatalf("%s: exit %d %s", c.shell, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s script lacks %q", c.shell, w)
			}
		}
		if _, err := exec.LookPath(c.check[0]); err != nil {
			t.Logf("%s not installed: syntax not checked", c.check[0])
			continue
		}
		f := filepath.Join(t.TempDir(), "ballast."+c.shell)
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command(c.check[0], append(c.check[1:], f)...).CombinedOutput(); err != nil {
			t.Errorf("%s rejects its script: %v\n%s", c.shell, err, b)
		}
	}
	if code, _, _ := run(t, "completion", "tcsh"); code != 2 {
		t.Errorf("an unknown shell: exit %d, want 2", code)
	}
}

func TestColorOnlyOnATerminalWithoutNO_COLOR(t *testing.T) {
	for _, c := range []struct {
		noColor, term string
		tty, want     bool
	}{
		{"", "xterm", true, true},
		{"1", "xterm", true, false},
		{"", "dumb", true, false},
		{"", "xterm", false, false},
	} {
		if got := colorAllowed(c.noColor, c.term, c.tty); got != c.want {
			t.Errorf("NO_COLOR=%q TERM=%q tty=%v: %v", c.noColor, c.term, c.tty, got)
		}
	}
	// Output to a file or a pipe is never coloured.
	_, out, _ := run(t, "templates")
	if strings.Contains(out, "\x1b[") {
		t.Errorf("escape codes in output that is not a terminal: %q", out)
	}
}
