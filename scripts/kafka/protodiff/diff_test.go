package main

import (
	"encoding/json"
	"testing"
)

// parseNormalised is the normalised tree of a JSON response.
func parseNormalised(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return normalise("", v)
}

func TestCompare(t *testing.T) {
	parse := func(s string) any { return parseNormalised(t, s) }
	// Topics in another order, other ids and throttle: alike but for the
	// partition's error code and message.
	klog := parse(`{"ThrottleMillis":0,"ClusterID":"abc","Topics":[
		{"Topic":"a","TopicID":[1,2],"Partitions":[{"Partition":0,"ErrorCode":3,"ErrorMessage":"x"}]},
		{"Topic":"b","TopicID":[0,0],"Partitions":[]}]}`)
	kafka := parse(`{"ThrottleMillis":7,"ClusterID":"def","Topics":[
		{"Topic":"b","TopicID":[0,0],"Partitions":[]},
		{"Topic":"a","TopicID":[3,4],"Partitions":[{"Partition":0,"ErrorCode":0,"ErrorMessage":"y"}]}]}`)
	var diffs []diff
	compare("", klog, kafka, &diffs)
	want := []diff{
		{path: "Topics[Topic=a].Partitions[Partition=0].ErrorCode", klog: "UNKNOWN_TOPIC_OR_PARTITION(3)", kafka: "0"},
		{path: "Topics[Topic=a].Partitions[Partition=0].ErrorMessage", klog: "x", kafka: "y", message: true},
	}
	if len(diffs) != len(want) {
		t.Fatalf("diffs = %+v, want %+v", diffs, want)
	}
	for i := range want {
		if diffs[i] != want[i] {
			t.Errorf("diff %d = %+v, want %+v", i, diffs[i], want[i])
		}
	}
	// -1 ("none") is kept, unlike an id; a missing element shows as absent.
	diffs = nil
	compare("", parse(`{"ProducerID":-1,"L":[{"Name":"x"}]}`), parse(`{"ProducerID":5,"L":[]}`), &diffs)
	if len(diffs) != 2 || diffs[0].path != "L[Name=x]" || diffs[0].kafka != "<absent>" || diffs[1].klog != "-1" || diffs[1].kafka != "<set>" {
		t.Errorf("diffs = %+v", diffs)
	}
}

func TestMessagesDropClockReadings(t *testing.T) {
	at := func(now string) any {
		var v any
		msg := `{"ErrorMessage":"Timestamp ` + now + `1 of message with offset 0 is out of range. The timestamp should be within [-92233702407186` + now + `, ` + now + `9]"}`
		if err := json.Unmarshal([]byte(msg), &v); err != nil {
			t.Fatal(err)
		}
		return normalise("", v)
	}
	var diffs []diff
	compare("", at("179614422428"), at("179614422433"), &diffs)
	if len(diffs) != 0 {
		t.Errorf("diffs = %+v, want none", diffs)
	}
}

func TestExpectedReason(t *testing.T) {
	for _, field := range []string{"ApiKeys[ApiKey=17]", "ApiKeys[ApiKey=2].MinVersion", "SupportedFeatures[Name=metadata.version]", "FinalizedFeatures[Name=streams.version]",
		"SupportedFeatures[Name=share.version].MaxVersion", "FinalizedFeatures[Name=share.version].MaxVersionLevel"} {
		if expectedReason("apiversions", field) == "" {
			t.Errorf("apiversions %s (a key or feature klog lacks) is not expected", field)
		}
	}
	for _, field := range []string{"ApiKeys[ApiKey=0].MinVersion", "ApiKeys[ApiKey=2].MaxVersion", "ApiKeys[ApiKey=26].MaxVersion", "FinalizedFeatures[Name=transaction.version]",
		"FinalizedFeatures[Name=group.version].MaxVersionLevel", "FinalizedFeaturesEpoch", "ErrorCode", "SupportedFeatures[Name=share.version].MinVersion"} {
		if expectedReason("apiversions", field) != "" {
			t.Errorf("apiversions %s is expected: a range or feature both serve must match", field)
		}
	}
	if expectedReason("metadata-unknown-topic", "ApiKeys[ApiKey=17]") != "" {
		t.Error("only apiversions' ApiKeys are expected")
	}
	if expectedReason("describeconfigs-repeated", "Resources[1]") == "" || expectedReason("describeconfigs-repeated", "Resources[0].ErrorCode") != "" {
		t.Error("only the repeated resource's answer is expected")
	}
	if expectedReason("createtopics-validate-only", "Topics[Topic=pd-vonly-RUN].Configs[Name=min.insync.replicas].Source") != "" {
		t.Error("min.insync.replicas' source is expected: klog reports it as Kafka 4 does")
	}
}

// Two clusters number their nodes differently: leaders and replica lists
// compare by whether they are set and by how many, not by ids.
func TestNodeIDs(t *testing.T) {
	parse := func(s string) any { return parseNormalised(t, s) }
	var diffs []diff
	compare("", parse(`{"Leader":0,"Replicas":[0,1,2],"ISR":[0,1],"Brokers":[{"NodeID":0},{"NodeID":1}]}`),
		parse(`{"Leader":2,"Replicas":[2,0,1],"ISR":[1,2],"Brokers":[{"NodeID":2},{"NodeID":1}]}`), &diffs)
	if len(diffs) != 0 {
		t.Errorf("diffs = %+v, want none", diffs)
	}
	diffs = nil
	compare("", parse(`{"Leader":-1,"ISR":[0,1],"Brokers":[{"NodeID":0}]}`), parse(`{"Leader":2,"ISR":[1],"Brokers":[{"NodeID":0},{"NodeID":1}]}`), &diffs)
	if len(diffs) != 3 || diffs[0].klog != "<1 set>" || diffs[1].klog != "<2 nodes>" || diffs[2].klog != "-1" || diffs[2].kafka != "<node>" {
		t.Errorf("diffs = %+v, want brokers, ISR and leader", diffs)
	}
}
