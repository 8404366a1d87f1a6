package main

import "path"

// expectation is a difference klog makes on purpose, documented in
// docs/compatibility.md.
type expectation struct {
	casePattern, fieldPattern string // path.Match patterns
	reason                    string
}

var expected = append([]expectation{
	// Only whole entries: a key either broker lists alone. The keys both
	// serve have Kafka 4.4's ranges, so a MinVersion or MaxVersion that
	// differs is a mismatch.
	{"apiversions", `ApiKeys\[ApiKey=*\]`, "API keys klog does not serve (docs/compatibility.md's table, generated from its registration table, lists those it does); scripts/kafka/README.md names them"},
	{"apiversions", `ApiKeys\[ApiKey=2\].MinVersion`, "klog keeps ListOffsets v0, which Kafka 4 removed, for Burrow 1.2.1 (docs/compatibility.md)"},
	{"describelogdirs-*", "Dirs*Bytes", "a klog --memory node's logs are on no file system: its TotalBytes and UsableBytes are -1, unknown (docs/compatibility.md)"},
	{"describeconfigs-repeated", `Resources\[1\]`, "klog describes a resource named twice once, so that no request is answered with more than what exists (broker/duplicates.go); docs/compatibility.md"},
	{"produce-trailing-bytes", "Topics*", "klog refuses records that end in bytes which are no whole batch (CORRUPT_MESSAGE), where Kafka appends the batch and drops them; docs/compatibility.md"},
	{"consumergroupheartbeat-join", "MemberEpoch", "a KIP-848 group's first member starts at epoch 1 on klog, 2 on Kafka 4.4 (which also defers target assignments); epochs are opaque to clients, which echo them; docs/compatibility.md"},
	{"consumergroupheartbeat-join", "Assignment*", "Kafka 4.4 computes a KIP-848 group's target assignment asynchronously, so its first heartbeat answer carries the first member's partitions or, when the assignor has not run yet, none (seen under load); klog assigns at the join. Clients take either and heartbeat on; docs/compatibility.md"},
	{"sharegroupheartbeat-*", "MemberEpoch", "a share group's first member starts at epoch 1 on klog, 2 on Kafka 4.4, which assigns asynchronously; epochs are opaque to clients, which echo them; docs/compatibility.md"},
	{"sharefetch-open", `\[0\].MemberEpoch`, "a share group's first member starts at epoch 1 on klog, 2 on Kafka 4.4, which assigns asynchronously; epochs are opaque to clients, which echo them; docs/compatibility.md"},
	{"sharefetch-open", `\[0\].Assignment*`, "Kafka 4.4 assigns a share group's partitions only once it has initialized their share state (asynchronously, through its share coordinator): the first heartbeat answers none; klog assigns at the join. Clients heartbeat on either way; docs/compatibility.md"},
	{"apiversions", `SupportedFeatures\[Name=share.version\].MaxVersion`, "klog's share.version stops at 1: level 2 is share groups' dead-letter queues, which klog does not have (docs/compatibility.md)"},
	{"apiversions", `FinalizedFeatures\[Name=share.version\].*VersionLevel`, "klog's share.version stops at 1: level 2 is share groups' dead-letter queues, which klog does not have (docs/compatibility.md)"},
	{"authz-metadata-auto-create-allow-*", `Topics\[*\].*`, "Metadata with auto-creation of a new topic: klog's first answer already has the topic, Kafka's is UNKNOWN_TOPIC_OR_PARTITION while its controller creates it; docs/compatibility.md"},
}, unadvertisedFeatures()...)

// unadvertisedFeatures are the feature flags klog supports at level 0
// only, where Kafka 4.4 finalizes them above 0: klog has nothing they turn
// on (docs/compatibility.md says why for each); and share.version, which
// klog supports up to 1, Kafka 4.4 up to 2. Their supported range
// differs, and klog does not finalize them; ApiVersions answers them so
// in the apiversions case and in the group.version round trip.
func unadvertisedFeatures() []expectation {
	var out []expectation
	for _, name := range []string{"kraft.version", "share.version", "streams.version", "eligible.leader.replicas.version"} {
		for _, field := range []string{"SupportedFeatures", "FinalizedFeatures"} {
			reason := "feature flag klog supports at level 0 only: it has no " + name + " behaviour (docs/compatibility.md)"
			if name == "share.version" {
				reason = "klog's share.version stops at 1: level 2, Kafka 4.4's, adds share groups' dead-letter queues, which klog does not have (docs/compatibility.md)"
			}
			out = append(out, expectation{"apiversions", field + `\[Name=` + name + `\]*`, reason},
				expectation{"updatefeatures-group-version-round-trip", `\[*\].` + field + `\[Name=` + name + `\]*`, reason})
		}
	}
	return out
}

// expectedReason is the reason a difference is expected, or "".
func expectedReason(caseName, field string) string {
	for _, e := range expected {
		c, _ := path.Match(e.casePattern, caseName)
		f, _ := path.Match(e.fieldPattern, field)
		if c && f {
			return e.reason
		}
	}
	return ""
}
