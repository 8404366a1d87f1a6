package main

import (
	"errors"

	"github.com/klogdev/klog/scripts/internal/kwire"
	"github.com/klogdev/klog/scripts/internal/procfs"
)

var (
	// errNodeExited means the klog process under test ended when the probe
	// did not stop it.
	errNodeExited = errors.New("node exited")

	// errNotReady means klog up did not write its ready file in time.
	errNotReady = errors.New("node not ready")

	// errBadProc means a /proc file did not have the expected layout.
	errBadProc = procfs.ErrFormat

	// errUnknownProbe is returned for a -probe name the tier does not have.
	errUnknownProbe = errors.New("unknown probe")

	// errNoVersion means the node does not serve an API a probe sends.
	errNoVersion = kwire.ErrNoVersion
)
