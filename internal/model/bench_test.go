package model

import "testing"

// BenchmarkValidateResult parses and checks a review result with three
// findings, as the loop does once per review: the strict decode, the
// schema, the typed decode and the cross-field rules.
func BenchmarkValidateResult(b *testing.B) {
	r := goodResult("changes_required", finding("todo-1", "blocking"), finding("todo-2", "strong_recommendation"), finding("todo-3", "defer"))
	r["lens_executions"].([]any)[0].(map[string]any)["verdict"] = "changes_required"
	doc := mustJSON(b, r)
	bind := Binding{HeadSHA: headSHA, ComparisonBaseSHA: baseSHA}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := ValidateResult(doc, bind); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParsePacket parses and checks a review packet (its diff is a
// oneOf of two shapes), as every reviewer call does.
func BenchmarkParsePacket(b *testing.B) {
	doc, err := testPacket().Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := ParsePacket(doc); err != nil {
			b.Fatal(err)
		}
	}
}
