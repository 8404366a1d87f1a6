package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// startBroker starts a single-node cluster for the duration of the test and
// returns its bootstrap address. It is the only place the CLI tests learn
// which broker implementation they run against.
func startBroker(t *testing.T) (bootstrap string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}
