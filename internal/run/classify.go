package run

import (
	"io"
	"os"

	"github.com/failpass/failpass/internal/testrunner"
)

// maxClassifyLog bounds what a classifier reads of a run's log: the
// log's own cap and its truncation marker.
const maxClassifyLog = DefaultMaxLog + 4096

// Environment says why a finished run of a test runner of kind failed for
// its environment rather than at a test (testrunner.Classify on its log
// at logPath), or "". It can only make a run inconclusive: an unknown
// runner or an unreadable log says nothing.
func (r Result) Environment(kind testrunner.Kind, logPath string) string {
	if kind == testrunner.Unknown {
		return ""
	}
	out := r.failedLog(logPath)
	if out == nil {
		return ""
	}
	return testrunner.Classify(kind, r.Exit, out)
}

// MissingDependency is Environment narrowed to a missing dependency
// (testrunner.MissingDependency): the reading of a candidate's own runs,
// where a test that does not compile is the code's to fix.
func (r Result) MissingDependency(kind testrunner.Kind, logPath string) string {
	out := r.failedLog(logPath)
	if out == nil {
		return ""
	}
	return testrunner.MissingDependency(kind, r.Exit, out)
}

// failedLog is what a classifier reads of a failed, conclusive run: its
// log, bounded; nil for a run that passed or proves nothing anyway, or a
// log that cannot be read.
func (r Result) failedLog(logPath string) []byte {
	if r.Inconclusive() || r.Exit == 0 {
		return nil
	}
	f, err := os.Open(logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	out, err := io.ReadAll(io.LimitReader(f, maxClassifyLog))
	if err != nil {
		return nil
	}
	return out
}
