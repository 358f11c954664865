// Package gocache serves the go command a layered build cache over its
// GOCACHEPROG protocol: lower caches it only reads (GOCACHE folders the
// go command filled: a card's build cache, the user's own, what a
// candidate's prebuild compiled) and a private upper folder where
// everything it writes goes.
//
// It is the overlay of the sandbox's candidate cache without a mount:
// where no mount namespace holds an overlay (--sandbox=off, namespaces
// denied, off Linux), a candidate's go command still starts from a warm
// cache (the signed base's, or the user's own) and never writes it.
// Without it such a candidate builds the standard library from nothing,
// every run.
//
// The go command starts the program given in GOCACHEPROG; failpass is
// that program when started as `failpass __gocache LOWER... UPPER` (Env),
// answered in this package's init so that nothing else of failpass
// starts. Go before 1.24 ignores GOCACHEPROG and uses GOCACHE, which Env
// points at a private folder: cold, never shared.
package gocache

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ProgArg is the first argument that makes failpass the cache program.
const ProgArg = "__gocache"

func init() {
	if len(os.Args) >= 4 && os.Args[1] == ProgArg {
		n := len(os.Args)
		if err := Serve(os.Stdin, os.Stdout, os.Args[2:n-1], os.Args[n-1]); err != nil {
			fmt.Fprintln(os.Stderr, "failpass: go build cache:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// Env is the environment that gives a go command the layered cache: read
// from lowers (GOCACHE folders, the first found first; "" for none),
// write to upper, and keep
// its own folder (what the go command stores beside the cache program:
// the fuzzing corpus) in private. self is failpass's executable. ok is
// false when GOCACHEPROG cannot name it (a path with both kinds of
// quote); the caller's cache is then the private one alone.
func Env(self string, lowers []string, upper, private string) (env []string, ok bool) {
	env = []string{"GOCACHE=" + private}
	if len(lowers) == 0 {
		lowers = []string{""}
	}
	var words []string
	for _, w := range append(append([]string{self, ProgArg}, lowers...), upper) {
		q, ok := quote(w)
		if !ok {
			return env, false
		}
		words = append(words, q)
	}
	return append(env, "GOCACHEPROG="+strings.Join(words, " ")), true
}

// quote is w as one field for the go command's GOCACHEPROG parser
// (cmd/internal/quoted.Split: fields split at spaces, '...' or "..."
// around a field that holds spaces or the other quote).
func quote(w string) (string, bool) {
	switch {
	case w == "":
		return "''", true
	case !strings.ContainsAny(w, " \t\n\r'\""):
		return w, true
	case !strings.Contains(w, "'"):
		return "'" + w + "'", true
	case !strings.Contains(w, `"`):
		return `"` + w + `"`, true
	}
	return "", false
}

// request is a cacheprog.Request as it comes over the wire.
type request struct {
	ID       int64
	Command  string
	ActionID []byte
	OutputID []byte
	BodySize int64
}

// response is a cacheprog.Response.
type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// hashSize is the size of an action or output id (SHA-256).
const hashSize = 32

// Serve answers the go command's requests from r on w until it asks to
// close or r ends. A get looks in upper, then in each of lowers in turn
// ("" is none); a put writes upper. Every folder uses the go command's
// own layout, so upper is a GOCACHE folder itself, and can be another
// run's lower. Lowers are never written.
func Serve(r io.Reader, w io.Writer, lowers []string, upper string) error {
	if upper == "" || !filepath.IsAbs(upper) {
		return errors.New("the cache folders must be absolute paths")
	}
	for _, l := range lowers {
		if l != "" && !filepath.IsAbs(l) {
			return errors.New("the cache folders must be absolute paths")
		}
	}
	layers := append([]string{upper}, lowers...)
	if err := os.MkdirAll(upper, 0o700); err != nil {
		return err
	}
	in := bufio.NewReaderSize(r, 64<<10)
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out)
	send := func(res response) error {
		if err := enc.Encode(res); err != nil {
			return err
		}
		return out.Flush()
	}
	if err := send(response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) == 0 {
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			continue
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			return fmt.Errorf("a request that is not JSON: %w", err)
		}
		res := response{ID: req.ID}
		switch req.Command {
		case "get":
			res.Miss = true
			for _, dir := range layers {
				if e, ok := lookup(dir, req.ActionID); ok {
					res.fill(e)
					res.Miss = false
					break
				}
			}
		case "put":
			path, err := put(upper, req, in)
			if err != nil {
				res.Err = err.Error()
				if errors.Is(err, errFraming) {
					send(res)
					return err
				}
			}
			res.DiskPath = path
		case "close":
			return send(res)
		default:
			res.Err = fmt.Sprintf("unknown command %q", req.Command)
		}
		if err := send(res); err != nil {
			return err
		}
	}
}

// entry is one action's cached output.
type entry struct {
	output []byte
	size   int64
	time   time.Time
	path   string
}

func (res *response) fill(e entry) {
	res.OutputID, res.Size, res.DiskPath = e.output, e.size, e.path
	t := e.time
	res.Time = &t
}

// lookup finds action's entry in the GOCACHE folder dir: its action file
// ("v1 <action> <output> <size> <unix nanoseconds>", fixed width) and an
// output file of that size. Anything else is a miss, as it is to the go
// command's own cache.
func lookup(dir string, action []byte) (entry, bool) {
	if dir == "" || len(action) != hashSize {
		return entry{}, false
	}
	b, err := os.ReadFile(fileName(dir, action, "a"))
	if err != nil {
		return entry{}, false
	}
	f := strings.Fields(string(b))
	if len(f) != 5 || f[0] != "v1" || f[1] != hex.EncodeToString(action) || !strings.HasSuffix(string(b), "\n") {
		return entry{}, false
	}
	out, err := hex.DecodeString(f[2])
	if err != nil || len(out) != hashSize {
		return entry{}, false
	}
	size, err1 := strconv.ParseInt(f[3], 10, 64)
	nanos, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return entry{}, false
	}
	path := fileName(dir, out, "d")
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return entry{}, false
	}
	return entry{output: out, size: size, time: time.Unix(0, nanos), path: path}, true
}

// fileName is the go command's own: <dir>/<first byte>/<id>-<kind>.
func fileName(dir string, id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+kind)
}

// errFraming is a body that does not follow its request as the protocol
// says; nothing after it can be read.
var errFraming = errors.New("a put's body is not a base64 JSON string on the next line")

// put reads the body that follows req from in and stores it in dir: the
// output file first, then the action file, each renamed into place, so a
// reader never sees an entry whose output is missing or short. The body
// is read whatever else fails, so the next request can be.
func put(dir string, req request, in *bufio.Reader) (string, error) {
	if req.BodySize < 0 {
		return "", errFraming
	}
	if len(req.ActionID) != hashSize || len(req.OutputID) != hashSize {
		if _, err := copyBody(io.Discard, in, req.BodySize); err != nil {
			return "", err
		}
		return "", errors.New("a put needs a 32-byte action and output id")
	}
	path := fileName(dir, req.OutputID, "d")
	tmp, err := createIn(filepath.Dir(path))
	if err != nil {
		if _, ferr := copyBody(io.Discard, in, req.BodySize); ferr != nil {
			return "", ferr
		}
		return "", err
	}
	defer os.Remove(tmp.Name())
	n, err := copyBody(tmp, in, req.BodySize)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if n != req.BodySize {
		return "", fmt.Errorf("%w: %d bytes, not %d", errFraming, n, req.BodySize)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	line := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, req.BodySize, time.Now().UnixNano())
	afile := fileName(dir, req.ActionID, "a")
	atmp, err := createIn(filepath.Dir(afile))
	if err != nil {
		return "", err
	}
	defer os.Remove(atmp.Name())
	_, err = atmp.WriteString(line)
	if cerr := atmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(atmp.Name(), afile)
	}
	if err != nil {
		return "", err
	}
	return path, nil
}

// createIn creates a temporary file in dir, which it makes if need be.
// Its name is unique: a go command a test starts is served by a program
// of its own, on the same upper folder.
func createIn(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, ".put-*")
}

// copyBody copies a put's body to w: nothing when size is 0, else the
// line `"<base64>"` that follows the request.
func copyBody(w io.Writer, in *bufio.Reader, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	// The go command ends a request with the encoder's newline and one
	// of its own: the body's line comes after a blank one.
	c, err := in.ReadByte()
	for err == nil && (c == '\n' || c == '\r' || c == ' ') {
		c, err = in.ReadByte()
	}
	if err != nil || c != '"' {
		return 0, errFraming
	}
	n, err := io.Copy(w, base64.NewDecoder(base64.StdEncoding, &untilQuote{r: in}))
	if err != nil {
		return n, fmt.Errorf("%w: %v", errFraming, err)
	}
	if c, err := in.ReadByte(); err != nil || c != '\n' {
		return n, errFraming
	}
	return n, nil
}

// untilQuote reads from r up to the next '"', which it consumes and
// does not return: the end of a base64 JSON string, whose alphabet has
// no quote and no escape.
type untilQuote struct {
	r       *bufio.Reader
	pending []byte // read from r, not yet returned
	last    bool   // pending ends the string
}

func (u *untilQuote) Read(p []byte) (int, error) {
	if len(u.pending) == 0 {
		if u.last {
			return 0, io.EOF
		}
		chunk, err := u.r.ReadSlice('"')
		switch {
		case err == nil:
			u.pending, u.last = chunk[:len(chunk)-1], true
		case errors.Is(err, bufio.ErrBufferFull):
			u.pending = chunk
		case errors.Is(err, io.EOF):
			return 0, io.ErrUnexpectedEOF
		default:
			return 0, err
		}
	}
	// ReadSlice's bytes are good until the next read of r: copy them now.
	n := copy(p, u.pending)
	u.pending = u.pending[n:]
	return n, nil
}
