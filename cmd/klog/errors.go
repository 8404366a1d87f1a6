package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// ErrItemsFailed reports that a command working on several items (topics,
// records) completed, but at least one item failed. The failures were already
// reported on stderr, one per item; the command exits with status 1.
var ErrItemsFailed = errors.New("some items failed")

// ErrPartial reports that a command printed a partial answer: some cells
// could not be read (a partition whose leader is down) and show "?", each
// distinct reason already reported on stderr. The command exits with
// status 3, so that a script tells a partial answer from a complete one
// (0) and from a failure (1).
var ErrPartial = errors.New("partial answer")

// A topic or partition named on the command line that does not exist is
// reported with inspect.ErrTopicNotFound or inspect.ErrPartitionNotFound:
// klog never creates topics implicitly.

// ErrLineTooLong reports an input line longer than the record size limit.
var ErrLineTooLong = errors.New("input line too long")

// usageError marks an error as the user's mistake in calling klog (unknown
// command or flag, bad argument); main exits with status 2 for it.
type usageError struct {
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usage error with a formatted message.
func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// usageArgs wraps a positional argument validator so that its failures are
// usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err: err}
		}
		return nil
	}
}
