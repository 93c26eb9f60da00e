package jsonout

import (
	"bytes"
	"testing"
)

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, map[string]any{"a": 1, "b": []int{2}}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
