package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/klogdev/klog/broker/brokertest"
)

// startBroker starts an in-process klog node for the duration of the test
// and returns its bootstrap address. It is the only place the CLI tests
// learn which broker they run against.
func startBroker(t *testing.T) (bootstrap string) {
	t.Helper()
	return brokertest.Start(t).Addr()
}

// startBrokerWith is startBroker with node options (broker configs).
func startBrokerWith(t *testing.T, opts ...brokertest.Option) (bootstrap string) {
	t.Helper()
	return brokertest.Start(t, opts...).Addr()
}

// startKfake starts franz-go's kfake broker, for the CLI features whose
// broker side klog does not have yet: transactions. The transactions issue
// moves these tests to startBroker.
func startKfake(t *testing.T) (bootstrap string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}
