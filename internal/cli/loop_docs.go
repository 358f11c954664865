package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/failpass/failpass/internal/atomicfile"
	"github.com/failpass/failpass/internal/jsonschema"
	"github.com/failpass/failpass/internal/loopdoc"
)

const (
	loopValidateUsage = "failpass loop validate [KIND] FILE [--kind KIND] [--against FILE] [--json]"
	loopFmtUsage      = "failpass loop fmt [--check] FILE..."
	loopSchemaUsage   = "failpass loop schema invocation|checkpoint|terminal-result"
)

// validateJSON is the stable `loop validate --json` object; fields may be
// added, never renamed or removed.
type validateJSON struct {
	File       string              `json:"file"`
	Kind       string              `json:"kind,omitempty"`
	Against    string              `json:"against,omitempty"`
	Valid      bool                `json:"valid"`
	Violations []loopdoc.Violation `json:"violations"`
	Error      string              `json:"error,omitempty"`
}

// againstKind is the kind of document each kind is checked against.
var againstKind = map[loopdoc.Kind]loopdoc.Kind{
	loopdoc.KindCheckpoint:     loopdoc.KindInvocation,
	loopdoc.KindTerminalResult: loopdoc.KindCheckpoint,
}

// runLoopValidate validates one loop document: exit 0 valid, 1 rule
// violations (one `PATH: RULE: MSG` line each on stderr), 2 when the file
// is unreadable, not JSON or not an object (the peer's convention).
func runLoopValidate(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "loop validate", loopValidateUsage)
	kindFlag := fs.String("kind", "", "document `KIND`: invocation, checkpoint or terminal-result (default: inferred from its fields)")
	against := fs.String("against", "", "also check the document against `FILE`: a checkpoint against its invocation, a terminal result against its checkpoint")
	asJSON := fs.Bool("json", false, "print the result as one JSON object on stdout")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	var kind loopdoc.Kind
	var path string
	switch len(pos) {
	case 1:
		path = pos[0]
	case 2:
		k, err := loopdoc.ParseKind(pos[0])
		if err != nil {
			return &UsageError{Msg: err.Error(), Hint: "usage: " + loopValidateUsage}
		}
		kind, path = k, pos[1]
	case 0:
		return &UsageError{Msg: "missing FILE", Hint: "usage: " + loopValidateUsage}
	default:
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[2]), Hint: "usage: " + loopValidateUsage}
	}
	if *kindFlag != "" {
		k, err := loopdoc.ParseKind(*kindFlag)
		if err != nil {
			return &UsageError{Msg: err.Error(), Hint: "usage: " + loopValidateUsage}
		}
		if kind != "" && k != kind {
			return &UsageError{Msg: fmt.Sprintf("kind %s and --kind %s disagree", kind, k), Hint: "name the kind once"}
		}
		kind = k
	}
	if kind == loopdoc.KindInvocation && *against != "" {
		return &UsageError{Msg: "an invocation is not checked against another document",
			Hint: "check the checkpoint against it instead: failpass loop validate checkpoint checkpoint.json --against " + path}
	}

	out := validateJSON{File: path, Against: *against, Violations: []loopdoc.Violation{}}
	fail := func(err error) error {
		if *asJSON {
			out.Error = err.Error()
			writeJSON(env, out, true)
		}
		return err
	}
	doc, err := readLoopDocument(path)
	if err != nil {
		return fail(err)
	}
	if kind == "" {
		if kind, err = loopdoc.Infer(doc); err != nil {
			return fail(Errorf("%s: %v", path, err).
				Hint("name the kind: failpass loop validate checkpoint %s (or --kind)", path))
		}
	}
	out.Kind = string(kind)
	vs, err := loopdoc.ValidateDocument(kind, doc)
	if err != nil {
		return fail(err)
	}
	if *against != "" {
		want, ok := againstKind[kind]
		if !ok {
			return fail(&UsageError{Msg: "an invocation is not checked against another document"})
		}
		other, err := readLoopDocument(*against)
		if err != nil {
			return fail(err)
		}
		// A document that plainly is another kind is a usage mistake; one
		// whose kind cannot be told is checked as given, and its missing
		// identities are reported as violations.
		if got, err := loopdoc.Infer(other); err == nil && got != want {
			return fail(Errorf("--against %s is a %s; a %s is checked against its %s", *against, got, kind, want).
				Hint("failpass loop validate %s %s --against %s.json", kind, path, want))
		}
		if kind == loopdoc.KindCheckpoint {
			vs = append(vs, loopdoc.CheckCheckpointAgainstInvocation(other, doc)...)
		} else {
			vs = append(vs, loopdoc.CheckTerminalAgainstCheckpoint(other, doc)...)
		}
	}
	out.Violations = append(out.Violations, vs...)
	out.Valid = len(vs) == 0
	if *asJSON {
		writeJSON(env, out, true)
	} else if out.Valid {
		fmt.Fprintf(env.Stdout, "valid %s: %s\n", kind, path)
	} else {
		for _, v := range vs {
			fmt.Fprintln(env.Stderr, v.String())
		}
	}
	if !out.Valid {
		return Exit(ExitFail)
	}
	return nil
}

// readLoopFile reads at most one byte more than a document may have, so an
// oversize file is refused by the decoder rather than read whole.
func readLoopFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Errorf("cannot read %s: %v", path, errors.Unwrap(err)).Hint("check the path; loop documents are JSON files such as checkpoint.json")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, jsonschema.MaxDocumentBytes+1))
	if err != nil {
		return nil, Errorf("cannot read %s: %v", path, err).Hint("check that %s is a regular file", path)
	}
	return data, nil
}

// readLoopDocument reads and decodes a loop document; every failure is a
// user error (exit 2) that names the file.
func readLoopDocument(path string) (map[string]any, error) {
	data, err := readLoopFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := loopdoc.DecodeObject(data)
	if err != nil {
		return nil, fileError(path, err)
	}
	return doc, nil
}

func fileError(path string, err error) error {
	var de *jsonschema.DecodeError
	if errors.As(err, &de) {
		de.File = path
		return de
	}
	var ne *loopdoc.NotObjectError
	if errors.As(err, &ne) {
		return Errorf("%s: %v", path, ne).Hint("%s", ne.Hints()[0])
	}
	return err
}

// runLoopFmt writes loop documents in canonical form, or with --check
// lists the files that are not (exit 1). Unreadable or malformed files are
// reported and make the exit 2, after every other file was handled.
func runLoopFmt(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "loop fmt", loopFmtUsage)
	check := fs.Bool("check", false, "change nothing; list the files that are not canonical and exit 1 if any")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &UsageError{Msg: "missing FILE", Hint: "usage: " + loopFmtUsage}
	}
	trouble, differ := false, false
	for _, path := range pos {
		changed, err := fmtLoopFile(path, *check)
		if err != nil {
			trouble = true
			exitCode(env, err) // prints the error the house way
			continue
		}
		if changed && *check {
			differ = true
			fmt.Fprintln(env.Stdout, path)
		}
	}
	switch {
	case trouble:
		return Exit(ExitTrouble)
	case differ:
		return Exit(ExitFail)
	}
	return nil
}

// fmtLoopFile reports whether path's bytes differ from their canonical
// form and, unless check, replaces the file atomically with that form.
func fmtLoopFile(path string, check bool) (bool, error) {
	data, err := readLoopFile(path)
	if err != nil {
		return false, err
	}
	doc, err := loopdoc.DecodeObject(data)
	if err != nil {
		return false, fileError(path, err)
	}
	canon, err := loopdoc.CanonicalValue(doc)
	if err != nil {
		return false, err
	}
	if string(canon) == string(data) {
		return false, nil
	}
	if check {
		return true, nil
	}
	if err := atomicfile.Replace(path, canon, nil); err != nil {
		return true, Errorf("cannot write %s: %v", path, err).Hint("loop fmt rewrites files in place; check the folder is writable, or use --check")
	}
	return true, nil
}

// runLoopSchema prints an embedded schema byte for byte.
func runLoopSchema(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "loop schema", loopSchemaUsage)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &UsageError{Msg: "name one schema", Hint: "usage: " + loopSchemaUsage}
	}
	kind, err := loopdoc.ParseKind(pos[0])
	if err != nil {
		return &UsageError{Msg: err.Error(), Hint: "schemas: " + strings.Join(loopdoc.SchemaNames, ", ")}
	}
	data, err := loopdoc.Schema(kind)
	if err != nil {
		return err
	}
	_, err = env.Stdout.Write(data)
	return err
}
