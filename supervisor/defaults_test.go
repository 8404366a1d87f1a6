package supervisor

import (
	"maps"
	"testing"
)

func TestDefaults(t *testing.T) {
	if d := Defaults(1); d != nil {
		t.Errorf("Defaults(1) = %v, want none: a single node keeps the broker's", d)
	}
	two := map[string]string{
		"default.replication.factor":               "2",
		"min.insync.replicas":                      "1",
		"offsets.topic.replication.factor":         "2",
		"transaction.state.log.replication.factor": "2",
		"transaction.state.log.min.isr":            "1",
	}
	three := map[string]string{
		"default.replication.factor":               "3",
		"min.insync.replicas":                      "2",
		"offsets.topic.replication.factor":         "3",
		"transaction.state.log.replication.factor": "3",
		"transaction.state.log.min.isr":            "2",
	}
	maps.Copy(two, LocalTimings)
	maps.Copy(three, LocalTimings)
	for n, want := range map[int]map[string]string{2: two, 3: three, 9: three} {
		if got := Defaults(n); !maps.Equal(got, want) {
			t.Errorf("Defaults(%d) = %v, want %v", n, got, want)
		}
	}
}
