package libparse

import "testing"

func TestParse(t *testing.T) {
	k, v, err := ParseHeader("Content-Type: text/plain")
	if err != nil || k != "Content-Type" || v != "text/plain" {
		t.Fatalf("ParseHeader = %q, %q, %v", k, v, err)
	}
}

func TestEmptyHeader(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("ParseHeader(\"\") panicked: %v", r)
		}
	}()
	if _, _, err := ParseHeader(""); err != ErrEmpty {
		t.Fatalf("ParseHeader(\"\") error = %v, want ErrEmpty", err)
	}
}
