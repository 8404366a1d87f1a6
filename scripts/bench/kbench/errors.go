package main

import "errors"

var (
	// errUnknownMode is returned for a -mode kbench does not have.
	errUnknownMode = errors.New("unknown mode")

	// errBrokerExited means the broker process under test ended before the
	// measurement was complete.
	errBrokerExited = errors.New("broker exited")

	// errNoCommand means startup mode was given no broker command to run.
	errNoCommand = errors.New("startup needs the broker command after the flags")

	// errShutdownTimeout means the broker did not exit within the grace
	// period after SIGTERM and was killed.
	errShutdownTimeout = errors.New("broker did not exit after SIGTERM")

	// errBadFlags means the flags do not describe a run kbench can make.
	errBadFlags = errors.New("bad flags")

	// errNoPairs means a report found no pair with both brokers measured.
	errNoPairs = errors.New("no complete pairs")
)
