package record

import "fmt"

// Problem names why a record is not valid. Callers branch on it; the
// values are stable and appear in `failpass record verify` output.
type Problem string

// The problems Verify reports, roughly in the order it checks them.
const (
	ProblemSignature    Problem = "signature"     // FILE.sig does not verify against the runners file
	ProblemNotCanonical Problem = "not-canonical" // the bytes are not their own RFC 8785 form
	ProblemMalformed    Problem = "malformed"     // not a failpass gate record
	ProblemCard         Problem = "card"          // the card's own signatures do not hold, or the run did not check them
	ProblemCardDigest   Problem = "card-digest"   // the record is of another card (or the card changed)
	ProblemBase         Problem = "base"          // the recorded base is not the card's base_sha
	ProblemSigners      Problem = "signers"       // a recorded card signer whose signature does not verify
	ProblemArgv         Problem = "argv"          // a recorded argv is not the card's, byte for byte
	ProblemExpected     Problem = "expected"      // a recorded expected exit is not the card's
	ProblemVerdict      Problem = "verdict"       // the verdict does not follow from the recorded exits
	ProblemDiffDigest   Problem = "diff-digest"   // --diff is not the recorded diff
	ProblemNumstat      Problem = "numstat"       // the recorded numstat is not git's reading of the diff
	ProblemTree         Problem = "tree"          // the subject is not the tree base + diff makes
)

// Error is a record that is not valid, and why. Field is where in the
// record the problem lies: a JSON path (predicate.steps[2].runs[0].argv)
// or, for the bytes themselves, a byte offset.
type Error struct {
	Problem Problem
	Field   string
	Msg     string
	Hint    string
	Err     error
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Problem, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Problem, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Hints says what to do about it, for the CLI's hint: lines.
func (e *Error) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{e.Hint}
}

func errorf(p Problem, field, format string, args ...any) *Error {
	return &Error{Problem: p, Field: field, Msg: fmt.Sprintf(format, args...)}
}
