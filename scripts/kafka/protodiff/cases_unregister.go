package main

import "github.com/twmb/franz-go/pkg/kmsg"

// The corpus's cases of UnregisterBroker: brokers that are not
// registered. Unregistering the broker under test would leave it without
// a registration until it restarts, on Kafka as on klog, so the cluster
// corpus is where a registered broker's turn would go.

func unregisterBrokerReq(id int32) *kmsg.UnregisterBrokerRequest {
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = id
	return req
}

func unregisterBrokerCases() []testCase {
	return []testCase{
		{"unregisterbroker-unknown", noSetup(func(*side) kmsg.Request { return unregisterBrokerReq(7) })},
		{"unregisterbroker-negative", noSetup(func(*side) kmsg.Request { return unregisterBrokerReq(-1) })},
	}
}
