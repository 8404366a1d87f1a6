package main

import (
	"testing"

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
