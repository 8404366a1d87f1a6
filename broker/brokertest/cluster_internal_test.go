package brokertest

import (
	"slices"
	"testing"
)

// TestReserveVotersDistinct: the voters' ports reserved for one cluster
// are distinct, though the system may hand out a port again as soon as it
// is closed.
func TestReserveVotersDistinct(t *testing.T) {
	for range 5000 {
		voters := reserveVoters(t, maxVoters)
		addrs := make([]string, len(voters))
		for i, v := range voters {
			addrs[i] = v[2:] // "id@host:port", one digit id
		}
		slices.Sort(addrs)
		if len(slices.Compact(addrs)) != maxVoters {
			t.Fatalf("voters %v share a port", voters)
		}
	}
}
