package record

import (
	"errors"
	"fmt"
	"github.com/failpass/failpass/internal/atomicfile"
	"io"
	"os"

	"github.com/failpass/failpass/internal/sign"
)

// SigPath is where the detached signature of the record at path lives.
func SigPath(path string) string { return path + ".sig" }

// Write stores a record and its signature: data at path, sig at
// SigPath(path), each written atomically (a temp file in the same folder,
// fsync, rename, fsync the folder). The signature is renamed into place
// last; a crash between the two renames leaves a new record beside an old
// signature, which never verifies, rather than a record that seems signed
// by a signature of something else. An existing record is replaced: the
// gate exists to write it.
func Write(path string, data, sig []byte) error {
	if err := writeAtomic(path, data); err != nil {
		return err
	}
	return writeAtomic(SigPath(path), sig)
}

func writeAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, 0o644)
}

// ReadError is a record or signature file that cannot be read: missing,
// not a regular file, or over its size bound. It is trouble (exit 2), not
// a verdict on the record.
type ReadError struct {
	File string
	Msg  string
}

func (e *ReadError) Error() string { return "cannot read " + e.File + ": " + e.Msg }

// Hints says what failpass expected to find.
func (e *ReadError) Hints() []string {
	return []string{"gate --record FILE writes the record to FILE and its signature to FILE.sig; pass FILE"}
}

// Read reads the record at path and its signature at SigPath(path),
// bounded by MaxSize and sign.MaxArmorSize.
func Read(path string) (data, sig []byte, err error) {
	if data, err = readBounded(path, MaxSize); err != nil {
		return nil, nil, err
	}
	if sig, err = readBounded(SigPath(path), sign.MaxArmorSize); err != nil {
		return nil, nil, err
	}
	return data, sig, nil
}

// ReadRecord reads the record at path alone (a note needs no signature).
func ReadRecord(path string) ([]byte, error) { return readBounded(path, MaxSize) }

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &ReadError{File: path, Msg: errMsg(err)}
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, &ReadError{File: path, Msg: "not a regular file"}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &ReadError{File: path, Msg: errMsg(err)}
	}
	if int64(len(data)) > limit {
		return nil, &ReadError{File: path, Msg: fmt.Sprintf("larger than %d bytes", limit)}
	}
	return data, nil
}

func errMsg(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
