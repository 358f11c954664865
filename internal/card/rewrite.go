package card

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Rewrite is the new content of a card file that held orig and must now
// hold want: orig's YAML with edit applied to its node tree, so the
// maintainer's comments, key order and layout survive. The result is
// checked by parsing it back: it must decode to want exactly (signed
// bytes, signatures, annotations). When the edit cannot give that (orig is
// not one YAML mapping, or the edited tree reads back as anything but
// want), the edited tree is refused and the card is written in Marshal's
// layout instead, checked the same way; kept says whether orig's layout
// was kept. An error means not even Marshal's layout reads back as want.
func Rewrite(orig []byte, want *Card, edit func(*Doc)) (data []byte, kept bool, err error) {
	if d, err := parseDoc(orig); err == nil {
		edit(d)
		if data, err := d.bytes(); err == nil && matches(data, want) == nil {
			return data, true, nil
		}
	}
	data, err = Marshal(want)
	if err != nil {
		return nil, false, err
	}
	if err := matches(data, want); err != nil {
		return nil, false, fmt.Errorf("rewritten card does not read back: %w", err)
	}
	return data, false, nil
}

// matches checks that data parses to a card equal to want in every
// field.
func matches(data []byte, want *Card) error {
	got, err := Parse("<rewritten card>", data)
	if err != nil {
		return err
	}
	gc, err := got.Canonical()
	if err != nil {
		return err
	}
	wc, err := want.Canonical()
	if err != nil {
		return err
	}
	switch {
	case !bytes.Equal(gc, wc):
		return errors.New("signed bytes differ")
	case !reflect.DeepEqual(got.Signatures, want.Signatures):
		return errors.New("signatures differ")
	case !reflect.DeepEqual(got.Annotations, want.Annotations):
		return errors.New("annotations differ")
	}
	return nil
}

// Doc is a card file's YAML node tree, edited in place inside Rewrite.
// Its methods write the fields failpass itself adds to a card (card sign,
// card annotate); a new key goes where Marshal would put it, a replaced
// value keeps the comments written beside the old one.
type Doc struct {
	doc, top *yaml.Node
}

func parseDoc(data []byte) (*Doc, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("card is not one YAML mapping")
	}
	return &Doc{doc: &doc, top: doc.Content[0]}, nil
}

// SetBaseSHA writes base_sha, after base_ref (or id).
func (d *Doc) SetBaseSHA(sha string) {
	d.set("base_sha", yamlStr(sha), "base_ref", "id")
}

// SetSignoff writes the signoff block, after held_out, sandbox or budget.
func (d *Doc) SetSignoff(s *Signoff) {
	d.set("signoff", signoffNode(s), "held_out", "sandbox", "budget")
}

// SetSignatures writes the signatures list, after signoff (or held_out,
// sandbox, budget). Each armor is a literal block, readable and copyable
// into a file for ssh-keygen -Y verify.
func (d *Doc) SetSignatures(sigs []Signature) {
	d.set("signatures", signaturesNode(sigs), "signoff", "held_out", "sandbox", "budget")
}

// AppendAnnotation adds one item to annotations, creating the list (a
// flow "[]" becomes a block list).
func (d *Doc) AppendAnnotation(a Annotation) {
	n := annotationNode(a)
	m := d.top.Content
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Value == "annotations" && m[i+1].Kind == yaml.SequenceNode {
			m[i+1].Style = 0
			m[i+1].Content = append(m[i+1].Content, n)
			return
		}
	}
	d.set("annotations", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{n}})
}

// SetHeldOutDigest writes held_out.digest, as the block's first key when
// it is new. A card without a held_out mapping is left as it is (Rewrite
// then finds the tree is not the wanted card).
func (d *Doc) SetHeldOutDigest(digest string) {
	m := d.top.Content
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Value != "held_out" || m[i+1].Kind != yaml.MappingNode {
			continue
		}
		h := m[i+1]
		for j := 0; j+1 < len(h.Content); j += 2 {
			if h.Content[j].Value == "digest" {
				v := yamlStr(digest)
				v.LineComment, v.HeadComment = h.Content[j+1].LineComment, h.Content[j+1].HeadComment
				h.Content[j+1] = v
				return
			}
		}
		h.Content = append([]*yaml.Node{yamlKey("digest"), yamlStr(digest)}, h.Content...)
		return
	}
}

// set replaces key's value, or inserts key after the first of after that
// exists (at the end when none does).
func (d *Doc) set(key string, value *yaml.Node, after ...string) {
	m := d.top.Content
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Value == key {
			// Keep comments written beside the old value.
			value.LineComment, value.HeadComment = m[i+1].LineComment, m[i+1].HeadComment
			m[i+1] = value
			return
		}
	}
	at := len(m)
	for _, a := range after {
		found := false
		for i := 0; i+1 < len(m); i += 2 {
			if m[i].Value == a {
				at, found = i+2, true
				break
			}
		}
		if found {
			break
		}
	}
	kv := []*yaml.Node{yamlKey(key), value}
	d.top.Content = append(m[:at:at], append(kv, m[at:]...)...)
}

func (d *Doc) bytes() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(d.doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func yamlKey(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// yamlStr is a double-quoted string, as Marshal writes every string: no
// value is ever read back as a number, boolean, null or timestamp.
func yamlStr(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func yamlInt(n int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(n, 10)}
}

func yamlMap(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, yamlKey(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}

func yamlStrList(items []string) *yaml.Node {
	l := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, s := range items {
		l.Content = append(l.Content, yamlStr(s))
	}
	return l
}

func signoffNode(s *Signoff) *yaml.Node {
	runs := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, r := range s.Runs {
		item := yamlMap("role", yamlStr(r.Role), "exit", yamlInt(int64(r.Exit)), "duration_ms", yamlInt(r.DurationMS))
		item.Style = yaml.FlowStyle
		runs.Content = append(runs.Content, item)
	}
	n := yamlMap("at", yamlStr(s.At), "tool", yamlStr(s.Tool), "decision", yamlStr(s.Decision))
	if s.Reference != "" {
		n.Content = append(n.Content, yamlKey("reference"), yamlStr(s.Reference))
	}
	if s.Mutation != "" {
		n.Content = append(n.Content, yamlKey("mutation"), yamlStr(s.Mutation))
	}
	n.Content = append(n.Content, yamlKey("runs"), runs)
	return n
}

func signaturesNode(sigs []Signature) *yaml.Node {
	l := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, s := range sigs {
		armor := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.Signature, Style: yaml.LiteralStyle}
		l.Content = append(l.Content, yamlMap("principal", yamlStr(s.Principal), "signature", armor))
	}
	return l
}

func annotationNode(a Annotation) *yaml.Node {
	n := yamlMap("by", yamlStr(a.By), "at", yamlStr(a.At), "note", yamlStr(a.Note))
	if t := a.Tighten; t != nil {
		tn := yamlMap()
		if t.MaxFiles != nil {
			tn.Content = append(tn.Content, yamlKey("max_files"), yamlInt(int64(*t.MaxFiles)))
		}
		if t.MaxChangedLines != nil {
			tn.Content = append(tn.Content, yamlKey("max_changed_lines"), yamlInt(int64(*t.MaxChangedLines)))
		}
		if len(t.DenyGlobs) > 0 {
			tn.Content = append(tn.Content, yamlKey("deny_globs"), yamlStrList(t.DenyGlobs))
		}
		if t.AllowHarness != nil {
			tn.Content = append(tn.Content, yamlKey("allow_harness"), yamlStrList(t.AllowHarness))
		}
		n.Content = append(n.Content, yamlKey("tighten"), tn)
	}
	return n
}
