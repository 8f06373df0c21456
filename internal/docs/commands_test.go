package docs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/cli"
	"github.com/ballastdev/ballast/internal/tools/devtools"
)

// binaries are the prefixes that mark a line of a ```sh block as a
// runnable command (docs/README.md, "Runnable commands"), and whether the
// binary is ballast-tools, which adds the developer tools.
var binaries = []struct {
	prefix string
	tools  bool
}{
	{"bin/ballast-tools ", true},
	{"bin/ballast ", false},
	{"./ballast ", false},
	{"ballast ", false},
}

// shellWords splits a command line as sh would, for what the docs use:
// words apart by blanks, single and double quotes, backslash escapes. It
// stops at a comment or at what ends the command (|, ;, &, a redirect).
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			return words, nil
		case strings.IndexByte("|;&<>", c) >= 0:
			flush()
			return words, nil
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unclosed %c", c)
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, nil
}

// runnable is one marked command: where it is and its arguments after
// the binary's name.
type runnable struct {
	where string
	line  string
	args  []string
	tools bool
}

// runnables finds the marked commands of pages.
func runnables(pages []page) (cmds []runnable, problems []string) {
	for _, p := range pages {
		eachLine(p, func(n int, line string, fenced bool, info string) {
			if !fenced || info != "sh" {
				return
			}
			l := strings.TrimSpace(line)
			for _, b := range binaries {
				if !strings.HasPrefix(l, b.prefix) {
					continue
				}
				where := fmt.Sprintf("%s:%d", p.rel, n)
				words, err := shellWords(strings.TrimPrefix(l, b.prefix))
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s: %s: %v", where, l, err))
				} else {
					cmds = append(cmds, runnable{where, l, words, b.tools})
				}
				return
			}
		})
	}
	return cmds, problems
}

// check parses one command with the CLI's own parsing, running nothing.
func (r runnable) check() error {
	var tools map[string]cli.Tool
	if r.tools {
		tools = devtools.Commands()
	}
	return cli.CheckArgs(r.args, tools)
}

// TestRunnableCommandsParse checks that every command the README, docs/
// and deploy/ mark as runnable names a command (and verb) that exists,
// with flags it takes.
func TestRunnableCommandsParse(t *testing.T) {
	cmds, problems := runnables(docPages(t, repoRoot(t)))
	for _, p := range problems {
		t.Error(p)
	}
	for _, c := range cmds {
		if err := c.check(); err != nil {
			t.Errorf("%s: %s\n\t%v", c.where, c.line, err)
		}
	}
	// The README's quick start alone has a dozen: far fewer means the
	// marking or the finder changed, and the test checks nothing.
	if len(cmds) < 30 {
		t.Errorf("only %d runnable commands found", len(cmds))
	}
	t.Logf("%d runnable commands parse", len(cmds))
}

// TestBrokenCommandsAreFound shows the check failing on commands that no
// longer parse, and ignoring what is not marked.
func TestBrokenCommandsAreFound(t *testing.T) {
	text := strings.Join([]string{
		"```sh",
		"bin/ballast submit hello name=you --wait   # fine",
		"bin/ballast sbumit hello",
		"ballast jobs --state queued --bogus",
		"./ballast chaos run --jobs many",
		"bin/ballast-tools bench --runs 2 --no-such-flag",
		"bin/ballast bench --runs 2",
		"bin/ballast-tools bench --runs 2",
		"for i in 1 2; do bin/ballast sbumit x; done",
		"```",
		"```text",
		"bin/ballast sbumit hello",
		"```",
		"bin/ballast sbumit hello",
	}, "\n")
	cmds, problems := runnables([]page{{"x.md", strings.Split(text, "\n")}})
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	if len(cmds) != 7 {
		t.Fatalf("found %d marked commands, want the 7 lines of the sh block that start with a binary", len(cmds))
	}
	var failed []string
	for _, c := range cmds {
		if c.check() != nil {
			failed = append(failed, c.where)
		}
	}
	want := []string{"x.md:3", "x.md:4", "x.md:5", "x.md:6", "x.md:7"}
	if strings.Join(failed, " ") != strings.Join(want, " ") {
		t.Errorf("failed %v, want %v", failed, want)
	}
}

func TestShellWords(t *testing.T) {
	for line, want := range map[string]string{
		`plan --trace month.csv --html plan.html`:             "plan|--trace|month.csv|--html|plan.html",
		`status        # two jobs lent to fixed`:              "status",
		`cost --by team      # or --by pool|template`:         "cost|--by|team",
		`submit x 'name=a b' "c d" e\ f`:                      "submit|x|name=a b|c d|e f",
		`completion fish > ~/.config/fish/completions/x`:      "completion|fish",
		`screenshot -o a.png   # --api URL, --token (default`: "screenshot|-o|a.png",
		`submit x --label k=v#1`:                              "submit|x|--label|k=v#1",
	} {
		got, err := shellWords(line)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("shellWords(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	if _, err := shellWords(`submit 'open`); err == nil {
		t.Error("an unclosed quote passed")
	}
}
