package record

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	c := testCard(t)
	good := string(canonical(t, testStatement(t, passVerdict(c), c)))
	replace := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("the test record lacks %q", old)
		}
		return strings.Replace(good, old, new, 1)
	}
	tests := []struct {
		name string
		in   string
		want Problem // "" for accepted
	}{
		{"canonical record", good, ""},
		{"empty", "", ProblemMalformed},
		{"not JSON", "{", ProblemMalformed},
		{"an array", "[]", ProblemMalformed},
		{"trailing newline", good + "\n", ProblemNotCanonical},
		{"leading space", " " + good, ProblemNotCanonical},
		{"space after a colon", replace(`"_type":`, `"_type": `), ProblemNotCanonical},
		{"no _type", replace(`{"_type":"https://in-toto.io/Statement/v1","predicate":`, `{"predicate":`), ProblemMalformed},
		{"keys out of order", replace(`"added":1,"binary":false`, `"binary":false,"added":1`), ProblemNotCanonical},
		{"unknown field", replace(`"tool":"failpass test"`, `"tool":"failpass test","tooz":1`), ProblemMalformed},
		{"missing field", replace(`"unsigned":false`, `"unsignez":false`), ProblemMalformed},
		{"null list", replace(`"missing":["resources"]`, `"missing":null`), ProblemMalformed},
		{"null runs", replace(`"runs":[]`, `"runs":null`), ProblemMalformed},
		{"a number as a string", replace(`"added":1`, `"added":"1"`), ProblemMalformed},
		{"duplicate key", replace(`"tool":"failpass test"`, `"tool":"failpass test","tool":"x"`), ProblemMalformed},
		{"other statement type", replace(`https://in-toto.io/Statement/v1`, `https://in-toto.io/Statement/v0.1`), ProblemMalformed},
		{"other predicate type", replace(`https://failpass.dev/gate-record/v1`, `https://failpass.dev/gate-record/v2`), ProblemMalformed},
		{"no subject", replace(`"subject":[{"digest":{"gitTree":"`+testTree+`"},"name":"git-tree"}]`, `"subject":[]`), ProblemMalformed},
		{"two subjects", replace(`"subject":[{"digest":{"gitTree":"`+testTree+`"},"name":"git-tree"}]`,
			`"subject":[{"digest":{"gitTree":"`+testTree+`"},"name":"git-tree"},{"digest":{"gitTree":"`+testTree+`"},"name":"git-tree"}]`), ProblemMalformed},
		{"short tree id", replace(`"gitTree":"`+testTree+`"`, `"gitTree":"2222"`), ProblemMalformed},
		{"upper-case tree id", replace(`"gitTree":"`+testTree+`"`, `"gitTree":"A`+testTree[1:]+`"`), ProblemMalformed},
		{"other subject name", replace(`"name":"git-tree"`, `"name":"tree"`), ProblemMalformed},
		{"pass naming a rule", replace(`"rule":null`, `"rule":"patch.pass"`), ProblemMalformed},
		{"fail naming no rule", replace(`"verdict":"pass"`, `"verdict":"fail"`), ProblemMalformed},
		{"verdict error", replace(`"verdict":"pass"`, `"verdict":"error"`), ProblemMalformed},
		{"tree without a base", replace(`"base":"`+testBase+`"`, `"base":""`), ProblemMalformed},
		{"base not a commit id", replace(`"base":"`+testBase+`"`, `"base":"main"`), ProblemMalformed},
		{"card digest not sha256", replace(`"digest":"sha256:`, `"digest":"sha512:`), ProblemMalformed},
		{"empty argv", replace(`"argv":["go","test","./..."]`, `"argv":[]`), ProblemMalformed},
		{"data after", good + "{}", ProblemMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.in))
			var got Problem
			if err != nil {
				var re *Error
				if !errors.As(err, &re) {
					t.Fatalf("Parse(%s) = %v (%T), want a *record.Error", tc.name, err, err)
				}
				got = re.Problem
				if s != nil {
					t.Errorf("Parse(%s) returned a statement with error %v", tc.name, err)
				}
			}
			if got != tc.want {
				t.Errorf("Parse(%s) = %v, want problem %q", tc.name, err, tc.want)
			}
		})
	}
}

func TestCanonicalRoundTrip(t *testing.T) {
	c := testCard(t)
	for _, v := range []string{"pass", "fail"} {
		vd := passVerdict(c)
		if v == "fail" {
			vd = failVerdict(c)
		}
		b := canonical(t, testStatement(t, vd, c))
		s, err := Parse(b)
		if err != nil {
			t.Fatalf("Parse(New(%s)) = %v, want a record", v, err)
		}
		again := canonical(t, s)
		if !bytes.Equal(again, b) {
			t.Errorf("Canonical(Parse(b)) != b for a %s record:\n%s\n%s", v, again, b)
		}
	}
}

func TestNewWithoutBase(t *testing.T) {
	c := testCard(t)
	v := passVerdict(c)
	rule := "card.base"
	v.Verdict, v.Rule, v.Base = "fail", &rule, ""
	for i := range v.Steps {
		v.Steps[i].Runs, v.Steps[i].Expected = nil, nil
	}
	s, err := New(v, c, testDiff, nil, nil, "failpass test", testTime)
	if err != nil {
		t.Fatalf("New(no base) = %v", err)
	}
	if s.Subject[0].Name != SubjectDiff || "sha256:"+s.Subject[0].Digest["sha256"] != Digest(testDiff) {
		t.Errorf("New(no base).Subject = %+v, want the diff by sha256", s.Subject)
	}
	if s.Tree() != "" {
		t.Errorf("New(no base).Tree() = %q, want none", s.Tree())
	}
	if _, err := Parse(canonical(t, s)); err != nil {
		t.Errorf("Parse(New(no base)) = %v", err)
	}
}
