package main

import "strings"

// groupStates are the group states a broker reports, classic and consumer
// protocol together, spelled as the broker spells them: what group list
// --state takes.
var groupStates = []string{
	"Empty", "Stable", "PreparingRebalance", "CompletingRebalance",
	"Assigning", "Reconciling", "NotReady", "Dead",
}

// txnStates are the transaction states a coordinator reports, spelled as
// the coordinator spells them: what txn list --state takes.
var txnStates = []string{
	"Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
	"CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence",
}

// canonicalStates returns --state values, given in any case, in the
// spelling of known, or a usage error naming the states known.
func canonicalStates(known, states []string) ([]string, error) {
	canon := make([]string, 0, len(states))
	for _, s := range states {
		c, ok := canonicalState(known, strings.TrimSpace(s))
		if !ok {
			return nil, usagef("--state %q: want one of %s", s, strings.Join(known, ", "))
		}
		canon = append(canon, c)
	}
	return canon, nil
}

// canonicalState returns the spelling in known of a state given in any
// case.
func canonicalState(known []string, s string) (string, bool) {
	for _, st := range known {
		if strings.EqualFold(st, s) {
			return st, true
		}
	}
	return "", false
}
