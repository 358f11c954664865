package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagSet is a standard flag.FlagSet that reports errors as UsageError and
// accepts flags after positional arguments (`loop validate FILE --json`).
type flagSet struct {
	*flag.FlagSet
	usage string
	out   io.Writer
	// trailer, when set, is printed after the flags by -h.
	trailer string
}

// newFlags makes a flag set for a command. usage is the synopsis line(s)
// printed by -h, without the "usage: " prefix.
func newFlags(env *Env, name, usage string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// Help that was asked for (-h) is the command's output: stdout, so
	// `failpass gate -h | less` works, as with go and gh.
	f := &flagSet{FlagSet: fs, usage: usage, out: env.Stdout}
	return f
}

// parse parses args, interleaving flags and positional arguments. A lone
// "--" ends flag parsing. -h prints usage and ends the command with exit 0.
func (f *flagSet) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.FlagSet.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.printUsage()
				return nil, Exit(ExitOK)
			}
			return nil, &UsageError{Msg: err.Error(), Hint: fmt.Sprintf("run 'failpass %s -h' for usage", f.Name())}
		}
		rest := f.FlagSet.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (f *flagSet) printUsage() {
	fmt.Fprintf(f.out, "usage: %s\n", strings.ReplaceAll(f.usage, "\n", "\n       "))
	if b := f.flagList(); b != "" {
		fmt.Fprintf(f.out, "\nflags:\n%s", b)
	}
	if f.trailer != "" {
		fmt.Fprintf(f.out, "\n%s", f.trailer)
	}
}

// flagList lists the flags as the usage line spells them: --name, with
// the placeholder of the flag's usage (`FILE`) and its default when it has
// one. flag.PrintDefaults would say -name, which usage lines never do.
func (f *flagSet) flagList() string {
	var b strings.Builder
	f.FlagSet.VisitAll(func(fl *flag.Flag) {
		arg, usage := flag.UnquoteUsage(fl)
		dash := "--"
		if len(fl.Name) == 1 {
			dash = "-"
		}
		fmt.Fprintf(&b, "  %s%s", dash, fl.Name)
		if arg != "" {
			fmt.Fprintf(&b, " %s", arg)
		}
		b.WriteString("\n        ")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n        "))
		if d := fl.DefValue; d != "" && d != "false" && d != "0" && d != "[]" {
			fmt.Fprintf(&b, " (default %s)", d)
		}
		b.WriteString("\n")
	})
	return b.String()
}

// stringList is a repeatable string flag (--diff A --diff B).
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
