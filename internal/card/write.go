package card

import (
	"errors"
	"fmt"

	"github.com/failpass/failpass/internal/atomicfile"
)

// Replace writes data over the card file at path, which Read returned
// as orig: durably, keeping its mode, through a symlink to its target.
// It refuses, writing nothing, when the file no longer holds orig:
// someone else wrote it while failpass worked on it (card sign's table
// runs for minutes), and their write must not be lost.
func Replace(path string, orig, data []byte) error {
	if err := atomicfile.Replace(path, data, orig); err != nil {
		return &WriteError{File: path, Err: err}
	}
	return nil
}

// WriteError is a card file Replace did not write.
type WriteError struct {
	File string
	Err  error
}

func (e *WriteError) Error() string {
	if errors.Is(e.Err, atomicfile.ErrChanged) {
		return fmt.Sprintf("%s changed while failpass was working on it; nothing written", e.File)
	}
	return fmt.Sprintf("cannot write %s: %v", e.File, e.Err)
}

// Unwrap returns the underlying error (atomicfile.ErrChanged for a card
// someone else wrote).
func (e *WriteError) Unwrap() error { return e.Err }

// Hints says how to get the card written.
func (e *WriteError) Hints() []string {
	if errors.Is(e.Err, atomicfile.ErrChanged) {
		return []string{"run the command again"}
	}
	return []string{"the card's folder must be writable"}
}
