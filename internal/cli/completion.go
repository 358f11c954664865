package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

const completionUsage = "failpass completion bash|zsh|fish"

// runCompletion prints a shell completion script, as gh and cobra-based
// tools do: `source <(failpass completion bash)`. The script is made from
// the command table and each command's own flag list (its -h), so it
// cannot drift from what failpass accepts.
func runCompletion(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "completion", completionUsage)
	fs.trailer = `Load it in the current shell, or install it for every new one:
  bash: source <(failpass completion bash)
        failpass completion bash > ~/.local/share/bash-completion/completions/failpass
  zsh:  source <(failpass completion zsh)
  fish: failpass completion fish > ~/.config/fish/completions/failpass.fish
`
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &UsageError{Msg: "name one shell: bash, zsh or fish", Hint: "failpass completion bash"}
	}
	levels := completionLevels(ctx, env)
	switch pos[0] {
	case "bash":
		writeBash(env.Stdout, levels, false)
	case "zsh":
		writeBash(env.Stdout, levels, true)
	case "fish":
		writeFish(env.Stdout, levels)
	default:
		return &UsageError{Msg: fmt.Sprintf("unknown shell %q: want bash, zsh or fish", pos[0])}
	}
	return nil
}

// completionLevel is what may follow a command path ("", "card",
// "card sign"): its subcommands, or its flags when it is a leaf.
type completionLevel struct {
	path  string
	subs  []*command
	flags []string
}

var flagLine = regexp.MustCompile(`^  (--?[A-Za-z0-9][A-Za-z0-9-]*)`)

// completionLevels walks the command table. A leaf's flags are read from
// the list its -h prints.
func completionLevels(ctx context.Context, env *Env) []completionLevel {
	var out []completionLevel
	var walk func(path []string, table []*command)
	walk = func(path []string, table []*command) {
		out = append(out, completionLevel{path: strings.Join(path, " "), subs: table})
		for _, c := range table {
			p := append(slices.Clone(path), c.name)
			if c.sub != nil {
				walk(p, c.sub)
				continue
			}
			var buf bytes.Buffer
			help := &Env{Stdin: bytes.NewReader(nil), Stdout: &buf, Stderr: io.Discard, Getenv: env.Getenv}
			_ = c.run(ctx, help, []string{"-h"})
			var flags []string
			for _, l := range strings.Split(buf.String(), "\n") {
				if m := flagLine.FindStringSubmatch(l); m != nil {
					flags = append(flags, m[1])
				}
			}
			out = append(out, completionLevel{path: strings.Join(p, " "), flags: flags})
		}
	}
	walk(nil, commands)
	return out
}

func (l completionLevel) words() string {
	var w []string
	for _, c := range l.subs {
		w = append(w, c.name)
	}
	return strings.Join(append(w, l.flags...), " ")
}

// writeBash writes the bash script; zsh runs the same through its
// bashcompinit, which every zsh ships.
func writeBash(w io.Writer, levels []completionLevel, zsh bool) {
	if zsh {
		fmt.Fprintln(w, "#compdef failpass")
		fmt.Fprintln(w, "autoload -U +X bashcompinit && bashcompinit")
	}
	fmt.Fprintln(w, `# failpass completion for bash (failpass completion bash).
_failpass_words() {
  case "$1" in`)
	for _, l := range levels {
		fmt.Fprintf(w, "    %q) echo %q ;;\n", l.path, l.words())
	}
	fmt.Fprintln(w, `  esac
}
_failpass() {
  local cur=${COMP_WORDS[COMP_CWORD]} path="" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case " $(_failpass_words "$path") " in
      *" $w "*) [[ $w == -* ]] || path="${path:+$path }$w" ;;
    esac
  done
  COMPREPLY=($(compgen -W "$(_failpass_words "$path")" -- "$cur"))
}
complete -o default -F _failpass failpass`)
}

func writeFish(w io.Writer, levels []completionLevel) {
	fmt.Fprintln(w, "# failpass completion for fish (failpass completion fish).")
	fmt.Fprintln(w, "complete -c failpass -f")
	for _, l := range levels {
		cond := "__fish_use_subcommand"
		if l.path != "" {
			var seen []string
			for _, p := range strings.Fields(l.path) {
				seen = append(seen, "__fish_seen_subcommand_from "+p)
			}
			cond = strings.Join(seen, "; and ")
		}
		for _, c := range l.subs {
			fmt.Fprintf(w, "complete -c failpass -n %q -a %s -d %q\n", cond, c.name, c.summary)
		}
		for _, f := range l.flags {
			if strings.HasPrefix(f, "--") {
				fmt.Fprintf(w, "complete -c failpass -n %q -F -l %s\n", cond, strings.TrimPrefix(f, "--"))
			} else {
				fmt.Fprintf(w, "complete -c failpass -n %q -F -s %s\n", cond, strings.TrimPrefix(f, "-"))
			}
		}
	}
}
