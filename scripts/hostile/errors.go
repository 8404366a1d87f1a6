package main

import (
	"errors"

	"github.com/klogdev/klog/internal/procfs"
	"github.com/klogdev/klog/scripts/internal/kwire"
)

var (
	// errBadProc means a /proc file did not have the expected layout.
	errBadProc = procfs.ErrFormat

	// errUnknownProbe is returned for a -probe name the tier does not have.
	errUnknownProbe = errors.New("unknown probe")

	// errNoVersion means the node does not serve an API a probe sends.
	errNoVersion = kwire.ErrNoVersion
)
