package main

import (
	"encoding/json"
	"testing"
)

func TestCompare(t *testing.T) {
	parse := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return normalise("", v)
	}
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

func TestExpectedReason(t *testing.T) {
	if expectedReason("apiversions", "ApiKeys[ApiKey=0].MinVersion") == "" {
		t.Error("apiversions key ranges are expected")
	}
	if expectedReason("apiversions", "ErrorCode") != "" || expectedReason("metadata-unknown-topic", "ApiKeys") != "" {
		t.Error("only apiversions' ApiKeys are expected")
	}
}
