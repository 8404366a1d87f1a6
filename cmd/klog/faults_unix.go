//go:build unix

package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/klogdev/klog/broker"
)

// handleFaultSignals makes SIGUSR1 cut node off from its peers and SIGUSR2
// heal it, until the returned stop is called: the supervisor of klog up -n
// sends them for klog node isolate and heal.
func handleFaultSignals(node *broker.Node, logger *slog.Logger) (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGUSR1, syscall.SIGUSR2)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				if sig == syscall.SIGUSR1 {
					node.Isolate()
					logger.Warn("isolated from the other nodes (klog node isolate)")
				} else {
					node.Heal()
					logger.Warn("healed: talking to the other nodes again (klog node heal)")
				}
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
		<-exited
	}
}
