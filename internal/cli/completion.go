package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// verbs are the words some commands take before their flags, for
// completion. Kept here rather than in the command table so that table
// stays one line per command.
var verbs = map[string][]string{
	"jobs":       {"list", "show", "logs"},
	"pipelines":  {"list", "runs", "show", "trigger", "cancel"},
	"sweep":      {"submit", "show", "cancel", "list"},
	"chaos":      {"spot-notice"},
	"templates":  {"list", "show"},
	"completion": {"bash", "zsh", "fish"},
}

// runCompletion prints a shell completion script for bash, zsh or fish.
// The scripts are static: commands, verbs and flags are written into them
// when they are generated, so completing never runs ballast (nor reaches
// Redis); regenerate after an upgrade.
func runCompletion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "completion", "completion bash|zsh|fish\n\n"+
		"  bash: source <(ballast completion bash)     (or write it to /etc/bash_completion.d/ballast)\n"+
		"  zsh:  source <(ballast completion zsh)      (after compinit)\n"+
		"  fish: ballast completion fish > ~/.config/fish/completions/ballast.fish")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"name the shell: ballast completion bash|zsh|fish"}
	}
	cmds := completionCommands(ctx, e)
	switch fs.Arg(0) {
	case "bash":
		return bashCompletion(e.out, cmds)
	case "zsh":
		return zshCompletion(e.out, cmds)
	case "fish":
		return fishCompletion(e.out, cmds)
	}
	return usageError{fmt.Sprintf("unknown shell %q: use bash, zsh or fish", fs.Arg(0))}
}

// completable is what a completion script knows of one command.
type completable struct {
	name, summary string
	verbs         []string
	flags         []*flag.Flag
}

// completionCommands lists every command with its flags, read from the
// flag sets the command itself builds when asked for its help, so the
// scripts cannot drift from the flags.
func completionCommands(ctx context.Context, e *env) []completable {
	cmds := e.commands()
	// A cancelled context: asking for help must not start anything, and a
	// command that reached further would stop at once.
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	var out []completable
	for _, name := range slices.Sorted(maps.Keys(cmds)) {
		c := completable{name: name, summary: cmds[name].summary, verbs: verbs[name]}
		probe := &env{out: io.Discard, errOut: io.Discard, help: true, tools: e.tools}
		_ = cmds[name].run(ctx, probe, []string{"--help"})
		seen := map[string]bool{}
		for _, fs := range probe.flagSets {
			fs.VisitAll(func(f *flag.Flag) {
				if !seen[f.Name] {
					seen[f.Name] = true
					c.flags = append(c.flags, f)
				}
			})
		}
		out = append(out, c)
	}
	out = append(out, completable{name: "help", summary: "show a command's help: help COMMAND"})
	return out
}

// dashed is how a flag is written on the command line: Go's flag package
// takes one or two dashes; one-letter flags read best with one.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func names(cmds []completable) string {
	var n []string
	for _, c := range cmds {
		n = append(n, c.name)
	}
	return strings.Join(n, " ")
}

func bashCompletion(w io.Writer, cmds []completable) error {
	var b strings.Builder
	b.WriteString("# bash completion for ballast: source <(ballast completion bash)\n")
	b.WriteString("_ballast() {\n")
	b.WriteString("    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}\n")
	fmt.Fprintf(&b, "    if [[ $COMP_CWORD -eq 1 ]]; then\n        COMPREPLY=($(compgen -W %q -- \"$cur\"))\n        return\n    fi\n", names(cmds))
	b.WriteString("    if [[ $cur == -* ]]; then\n        case $cmd in\n")
	for _, c := range cmds {
		if len(c.flags) == 0 {
			continue
		}
		var fl []string
		for _, f := range c.flags {
			fl = append(fl, dashed(f.Name))
		}
		fmt.Fprintf(&b, "        %s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", c.name, strings.Join(fl, " "))
	}
	b.WriteString("        esac\n        return\n    fi\n")
	b.WriteString("    if [[ $COMP_CWORD -eq 2 ]]; then\n        case $cmd in\n")
	fmt.Fprintf(&b, "        help) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", names(cmds))
	for _, c := range cmds {
		if len(c.verbs) > 0 {
			fmt.Fprintf(&b, "        %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", c.name, strings.Join(c.verbs, " "))
		}
	}
	b.WriteString("        esac\n    fi\n")
	b.WriteString("    COMPREPLY=($(compgen -f -- \"$cur\"))\n}\n")
	b.WriteString("complete -o filenames -F _ballast ballast\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// zshItem is one single-quoted "word:description" entry for _describe,
// where ':' separates the two, so a ':' in the description is escaped.
func zshItem(word, desc string) string {
	desc = strings.ReplaceAll(firstLine(desc), ":", `\:`)
	return "'" + strings.ReplaceAll(word+":"+desc, "'", `'\''`) + "'"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func zshCompletion(w io.Writer, cmds []completable) error {
	var b strings.Builder
	b.WriteString("#compdef ballast\n# zsh completion for ballast: source <(ballast completion zsh), after compinit\n")
	b.WriteString("_ballast() {\n    local -a items\n    if (( CURRENT == 2 )); then\n        items=(\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "            %s\n", zshItem(c.name, c.summary))
	}
	b.WriteString("        )\n        _describe command items\n        return\n    fi\n")
	b.WriteString("    if [[ $PREFIX == -* ]]; then\n        case $words[2] in\n")
	for _, c := range cmds {
		if len(c.flags) == 0 {
			continue
		}
		fmt.Fprintf(&b, "        %s) items=(", c.name)
		for i, f := range c.flags {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(zshItem(dashed(f.Name), f.Usage))
		}
		b.WriteString(") ;;\n")
	}
	b.WriteString("        esac\n        _describe flag items\n        return\n    fi\n")
	b.WriteString("    if (( CURRENT == 3 )); then\n        case $words[2] in\n")
	fmt.Fprintf(&b, "        help) compadd -- %s; return ;;\n", names(cmds))
	for _, c := range cmds {
		if len(c.verbs) > 0 {
			fmt.Fprintf(&b, "        %s) compadd -- %s; return ;;\n", c.name, strings.Join(c.verbs, " "))
		}
	}
	b.WriteString("        esac\n    fi\n    _files\n}\n")
	b.WriteString("compdef _ballast ballast\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// fishQuote quotes s for fish, where a single-quoted word escapes only
// backslash and the quote.
func fishQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

func fishCompletion(w io.Writer, cmds []completable) error {
	var b strings.Builder
	b.WriteString("# fish completion for ballast: ballast completion fish > ~/.config/fish/completions/ballast.fish\n")
	b.WriteString("complete -c ballast -f\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c ballast -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(firstLine(c.summary)))
	}
	for _, c := range cmds {
		cond := fishQuote("__fish_seen_subcommand_from " + c.name)
		if len(c.verbs) > 0 {
			fmt.Fprintf(&b, "complete -c ballast -n %s -a %s\n", cond, fishQuote(strings.Join(c.verbs, " ")))
		}
		for _, f := range c.flags {
			opt := "-l " + f.Name
			if len(f.Name) == 1 {
				opt = "-o " + f.Name
			}
			fmt.Fprintf(&b, "complete -c ballast -n %s %s -d %s\n", cond, opt, fishQuote(firstLine(f.Usage)))
		}
	}
	fmt.Fprintf(&b, "complete -c ballast -n %s -a %s\n", fishQuote("__fish_seen_subcommand_from help"), fishQuote(names(cmds)))
	b.WriteString("complete -c ballast -n 'not __fish_use_subcommand' -F\n")
	_, err := io.WriteString(w, b.String())
	return err
}
