package main

import "path"

// expectation is a difference klog makes on purpose, documented in the
// README's compatibility section.
type expectation struct {
	casePattern, fieldPattern string // path.Match patterns
	reason                    string
}

var expected = []expectation{
	{"apiversions", "ApiKeys*", "klog serves the versions of README's Compatibility table, generated from its registration table; scripts/kafka/README.md lists how they differ from Kafka 4.4's"},
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
