//go:build !unix

package main

import (
	"log/slog"

	"github.com/klogdev/klog/broker"
)

// handleFaultSignals: klog node isolate and heal need Unix signals; local
// clusters elsewhere run without them.
func handleFaultSignals(_ *broker.Node, logger *slog.Logger) (stop func()) {
	logger.Warn("klog node isolate and heal are not supported on this system")
	return func() {}
}
