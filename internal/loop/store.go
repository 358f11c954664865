package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/failpass/failpass/internal/atomicfile"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/loopdoc"
)

// File names inside a loop's folder, <git common dir>/failpass/loops/<id>/.
const (
	invocationFile = "invocation.json"
	checkpointFile = "checkpoint.json"
	terminalFile   = "terminal-result.json"
	settingsFile   = "settings.json"
	passesFile     = "passes.json"
)

// validID says id has the shape of an invocation id: it names a folder
// and a ref component, so it is 1-100 characters of a small safe
// alphabet, starting with a letter or digit, without "..", and not
// ending in "." or ".lock".
func validID(id string) bool {
	if id == "" || len(id) > 100 || strings.Contains(id, "..") || strings.HasSuffix(id, ".") || strings.HasSuffix(id, ".lock") {
		return false
	}
	for i, r := range id {
		alnum := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
		if !alnum && (i == 0 || (r != '.' && r != '_' && r != '-')) {
			return false
		}
	}
	return true
}

// CheckID returns an error unless id can name a loop's folder and refs.
func CheckID(id string) error {
	if !validID(id) {
		return &InputError{Msg: fmt.Sprintf("invocation id %q is not usable", id),
			Hint: "an invocation id is 1-100 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit, without '..' and not ending in '.' or '.lock'"}
	}
	return nil
}

// Store is one loop's folder. Every document is validated before it is
// written, and written atomically: temp file, fsync, rename, fsync of the
// folder, so a kill -9 leaves either the old document or the new one.
type Store struct {
	Dir string
}

// StoreFor is the folder of invocation id under commonDir.
func StoreFor(commonDir, id string) *Store {
	return &Store{Dir: filepath.Join(commonDir, "failpass", "loops", id)}
}

// Exists says whether the loop has an invocation document.
func (s *Store) Exists() bool {
	_, err := os.Stat(filepath.Join(s.Dir, invocationFile))
	return err == nil
}

// DocumentError is a loop document failpass refused to write or read
// because it broke the contract's rules.
type DocumentError struct {
	Kind       loopdoc.Kind
	File       string
	Violations []loopdoc.Violation
}

func (e *DocumentError) Error() string {
	msg := fmt.Sprintf("%s %s breaks %d contract rule(s)", e.Kind, e.File, len(e.Violations))
	for i, v := range e.Violations {
		if i == 5 {
			msg += fmt.Sprintf("; and %d more", len(e.Violations)-5)
			break
		}
		msg += "; " + v.String()
	}
	return msg
}

// toDoc marshals v canonically and decodes it into the generic form the
// validators read.
func toDoc(v any) ([]byte, map[string]any, error) {
	data, err := loopdoc.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	doc, err := loopdoc.DecodeObject(data)
	if err != nil {
		return nil, nil, err
	}
	return data, doc, nil
}

// checkInvocation validates inv and returns its canonical bytes.
func checkInvocation(inv *loopdoc.Invocation) ([]byte, map[string]any, error) {
	data, doc, err := toDoc(inv)
	if err != nil {
		return nil, nil, err
	}
	vs, err := loopdoc.ValidateDocument(loopdoc.KindInvocation, doc)
	if err != nil {
		return nil, nil, err
	}
	if len(vs) > 0 {
		return nil, nil, &DocumentError{Kind: loopdoc.KindInvocation, File: invocationFile, Violations: vs}
	}
	return data, doc, nil
}

// checkCheckpoint validates cp on its own and against its invocation.
func checkCheckpoint(invDoc map[string]any, cp *loopdoc.Checkpoint) ([]byte, map[string]any, error) {
	data, doc, err := toDoc(cp)
	if err != nil {
		return nil, nil, err
	}
	vs, err := loopdoc.ValidateDocument(loopdoc.KindCheckpoint, doc)
	if err != nil {
		return nil, nil, err
	}
	vs = append(vs, loopdoc.CheckCheckpointAgainstInvocation(invDoc, doc)...)
	if len(vs) > 0 {
		return nil, nil, &DocumentError{Kind: loopdoc.KindCheckpoint, File: checkpointFile, Violations: vs}
	}
	return data, doc, nil
}

// checkTerminal validates tr on its own and against its checkpoint.
func checkTerminal(cpDoc map[string]any, tr *loopdoc.TerminalResult) ([]byte, error) {
	data, doc, err := toDoc(tr)
	if err != nil {
		return nil, err
	}
	vs, err := loopdoc.ValidateDocument(loopdoc.KindTerminalResult, doc)
	if err != nil {
		return nil, err
	}
	vs = append(vs, loopdoc.CheckTerminalAgainstCheckpoint(cpDoc, doc)...)
	if len(vs) > 0 {
		return nil, &DocumentError{Kind: loopdoc.KindTerminalResult, File: terminalFile, Violations: vs}
	}
	return data, nil
}

// write puts data in name atomically.
func (s *Store) write(name string, data []byte) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("loop: store: %w", err)
	}
	return writeAtomic(filepath.Join(s.Dir, name), data)
}

// writeAtomic writes a temp file beside path, fsyncs it, renames it over
// path and fsyncs the folder so the rename itself is durable.
func writeAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("loop: store %s: %w", path, err)
	}
	return nil
}

func (s *Store) read(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.Dir, name))
}

// LoadInvocation reads and validates the loop's invocation.
func (s *Store) LoadInvocation() (*loopdoc.Invocation, []byte, error) {
	data, err := s.read(invocationFile)
	if err != nil {
		return nil, nil, err
	}
	inv, err := loopdoc.ParseInvocation(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(s.Dir, invocationFile), err)
	}
	return inv, data, nil
}

// LoadCheckpoint reads the loop's checkpoint (validated on its own).
func (s *Store) LoadCheckpoint() (*loopdoc.Checkpoint, []byte, error) {
	data, err := s.read(checkpointFile)
	if err != nil {
		return nil, nil, err
	}
	cp, err := loopdoc.ParseCheckpoint(data)
	if err != nil {
		return nil, data, fmt.Errorf("%s: %w", filepath.Join(s.Dir, checkpointFile), err)
	}
	return cp, data, nil
}

// LoadTerminal reads the loop's terminal result, if it has one.
func (s *Store) LoadTerminal() (*loopdoc.TerminalResult, []byte, error) {
	data, err := s.read(terminalFile)
	if err != nil {
		return nil, nil, err
	}
	tr, err := loopdoc.ParseTerminalResult(data)
	if err != nil {
		return nil, data, fmt.Errorf("%s: %w", filepath.Join(s.Dir, terminalFile), err)
	}
	return tr, data, nil
}

// Settings are what an invocation document does not carry but resume
// needs: the adapter specs and failpass's own options. Written once at
// start; never trusted for identity (that is the invocation's).
type Settings struct {
	Reviewer   string   `json:"reviewer"`
	Fixer      string   `json:"fixer"`
	Decider    string   `json:"decider,omitempty"`
	Lenses     []string `json:"lenses,omitempty"`
	Card       string   `json:"card,omitempty"`
	Remote     string   `json:"remote,omitempty"`
	RecordKey  string   `json:"record_key,omitempty"`
	BaseURL    string   `json:"base_url,omitempty"`
	KeyEnv     string   `json:"key_env,omitempty"`
	WorkingDir string   `json:"working_dir"` // resolves relative cmd: programs
	// AllowUnsigned and AllowedSigners are how the card's signature was
	// judged at start; resume judges it the same way again.
	AllowUnsigned  bool   `json:"allow_unsigned,omitempty"`
	AllowedSigners string `json:"allowed_signers,omitempty"`
	// NoSandbox: --sandbox=off, validation runs uncontained.
	NoSandbox bool `json:"no_sandbox,omitempty"`
	// Grants are what the role programs may reach beyond their sandbox
	// (--role-read, --role-env, --role-network).
	Grants Grants `json:"grants,omitzero"`
}

// SaveSettings writes the settings file.
func (s *Store) SaveSettings(st *Settings) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return s.write(settingsFile, append(data, '\n'))
}

// LoadSettings reads the settings file.
func (s *Store) LoadSettings() (*Settings, error) {
	data, err := s.read(settingsFile)
	if err != nil {
		return nil, err
	}
	var st Settings
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(s.Dir, settingsFile), err)
	}
	if st.Reviewer == "" || st.Fixer == "" {
		return nil, errors.New(filepath.Join(s.Dir, settingsFile) + ": reviewer and fixer are required")
	}
	return &st, nil
}

// InputError is a user error with one hint; the CLI prints it and exits 2.
type InputError struct {
	Msg  string
	Hint string
}

func (e *InputError) Error() string { return e.Msg }

// Hints says how to fix it.
func (e *InputError) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{e.Hint}
}

// policyMemory is what the early-stop policy remembers across a resume:
// the finding keys of every pass and those the newest commit claimed to
// fix. It is failpass's own file, never evidence: a missing or unreadable
// one only means the early stops start afresh.
type policyMemory struct {
	Passes  []Pass   `json:"passes"`
	Claimed []string `json:"claimed,omitempty"`
}

func (s *Store) savePolicy(m policyMemory) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.write(passesFile, append(data, '\n'))
}

func (s *Store) loadPolicy() policyMemory {
	var m policyMemory
	if data, err := s.read(passesFile); err == nil {
		json.Unmarshal(data, &m)
	}
	return m
}
