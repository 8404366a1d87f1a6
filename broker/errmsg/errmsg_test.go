package errmsg

import (
	"errors"
	"fmt"
	"testing"
)

func TestWireMessageSurvivesWrapping(t *testing.T) {
	base := errors.New("invalid topic name")
	err := fmt.Errorf("create: %w", Withf(fmt.Errorf("%w: %q is not allowed", base, "."), "Topic name is invalid: '%s' is not allowed", "."))
	if !errors.Is(err, base) {
		t.Fatalf("%v does not wrap %v", err, base)
	}
	if got, want := err.Error(), `create: invalid topic name: "." is not allowed`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if msg, ok := Wire(err); !ok || msg != "Topic name is invalid: '.' is not allowed" {
		t.Errorf("Wire = %q, %v", msg, ok)
	}
	if msg, ok := Wire(base); ok {
		t.Errorf("Wire of a plain error = %q, true", msg)
	}
}
