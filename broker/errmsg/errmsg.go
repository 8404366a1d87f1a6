// Package errmsg attaches to an error the message Kafka sends on the wire
// with it. klog's errors keep their own, richer text (for logs and
// klog's packages); a response's ErrorMessage field says what Kafka 4.4
// says, so that clients and tools that show it read the same words from
// either broker.
//
// It imports nothing of klog's and so may be used by any package that
// makes errors a handler answers with.
package errmsg

import (
	"errors"
	"fmt"
)

// wireError is an error with its wire message.
type wireError struct {
	err error
	msg string
}

func (e *wireError) Error() string { return e.err.Error() }
func (e *wireError) Unwrap() error { return e.err }

// With returns err carrying msg as its wire message; an empty msg means
// Kafka sends none (null). errors.Is and errors.As see through it to err.
func With(err error, msg string) error { return &wireError{err: err, msg: msg} }

// Withf is With with the wire message formatted as by fmt.Sprintf.
func Withf(err error, format string, args ...any) error {
	return With(err, fmt.Sprintf(format, args...))
}

// Wire is the wire message of the outermost error in err's chain that
// carries one.
func Wire(err error) (string, bool) {
	var we *wireError
	if errors.As(err, &we) {
		return we.msg, true
	}
	return "", false
}
