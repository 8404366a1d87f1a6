package metadata

import (
	"reflect"
	"testing"
)

// goldenRecords holds one record of every kind, with every optional field
// set, and its encoding as written to the Raft log. The encoding is the
// format of every metadata log and snapshot on disk: a change to any of
// these bytes breaks decoding of existing clusters, so it must come with a
// new payload version (see the package doc), never as an edit here.
func goldenRecords() []struct {
	rec  Record
	want string
} {
	broker := "2"
	inc := testID(9)
	return []struct {
		rec  Record
		want string
	}{
		{&SetClusterIDRecord{ClusterID: "c1", BrokerDefaults: map[string]string{"min.insync.replicas": "2", "a": "b"}},
			`{"v":1,"type":"SetClusterID","data":{"clusterID":"c1","brokerDefaults":{"a":"b","min.insync.replicas":"2"}}}`},
		{&RegisterBrokerRecord{Broker: Broker{ID: 2, Host: "h", Port: 9092, Rack: "r", Fenced: true, ShuttingDown: true, Incarnation: inc, UncleanShutdown: true}, IfIncarnation: &inc},
			`{"v":1,"type":"RegisterBroker","data":{"broker":{"id":2,"host":"h","port":9092,"rack":"r","fenced":true,"shuttingDown":true,"incarnation":"AAAAAAAAAAAAAAAAAAAACQ","uncleanShutdown":true},"ifIncarnation":"AAAAAAAAAAAAAAAAAAAACQ"}}`},
		{&SetControllerRecord{ID: 3},
			`{"v":1,"type":"SetController","data":{"id":3}}`},
		{&CreateTopicRecord{Name: "t", ID: testID(1), Configs: map[string]string{"cleanup.policy": "compact"}, Internal: true,
			Partitions: []Partition{{Index: 0, Leader: 1, LeaderEpoch: 2, PartitionEpoch: 3, Replicas: []int32{1, 2}, ISR: []int32{1}, AddingReplicas: []int32{2}, RemovingReplicas: []int32{3}}}},
			`{"v":1,"type":"CreateTopic","data":{"name":"t","id":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[{"index":0,"leader":1,"leaderEpoch":2,"partitionEpoch":3,"replicas":[1,2],"isr":[1],"addingReplicas":[2],"removingReplicas":[3]}],"configs":{"cleanup.policy":"compact"},"internal":true}}`},
		{&DeleteTopicRecord{Name: "t", ID: testID(1)},
			`{"v":1,"type":"DeleteTopic","data":{"name":"t","id":"AAAAAAAAAAAAAAAAAAAAAQ"}}`},
		{&CreatePartitionsRecord{Topic: "t", ID: testID(1), Partitions: []Partition{{Index: 1, Leader: 2, Replicas: []int32{2}, ISR: []int32{2}}}},
			`{"v":1,"type":"CreatePartitions","data":{"topic":"t","id":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[{"index":1,"leader":2,"leaderEpoch":0,"partitionEpoch":0,"replicas":[2],"isr":[2]}]}}`},
		{&AlterTopicConfigsRecord{Topic: "t", ID: testID(1), Replace: true, Set: map[string]string{"retention.ms": "5"}, Delete: []string{"segment.ms"}},
			`{"v":1,"type":"AlterTopicConfigs","data":{"topic":"t","id":"AAAAAAAAAAAAAAAAAAAAAQ","replace":true,"set":{"retention.ms":"5"},"delete":["segment.ms"]}}`},
		{&AlterTopicConfigsRecord{Broker: &broker, Set: map[string]string{"min.insync.replicas": "1"}},
			`{"v":1,"type":"AlterTopicConfigs","data":{"topic":"","id":"AAAAAAAAAAAAAAAAAAAAAA","broker":"2","set":{"min.insync.replicas":"1"}}}`},
		{&AllocateProducerIDsRecord{BlockSize: 1000},
			`{"v":1,"type":"AllocateProducerIDs","data":{"blockSize":1000}}`},
		{&PartitionChangeRecord{Topic: "t", ID: testID(1), Partition: 4, Leader: new(int32(2)), ISR: []int32{2, 3}, Replicas: []int32{2, 3, 4},
			AddingReplicas: []int32{4}, RemovingReplicas: []int32{}, BumpLeaderEpoch: true, IfLeaderEpoch: new(int32(5)), IfPartitionEpoch: new(int32(6))},
			`{"v":1,"type":"PartitionChange","data":{"topic":"t","id":"AAAAAAAAAAAAAAAAAAAAAQ","partition":4,"leader":2,"isr":[2,3],"replicas":[2,3,4],"addingReplicas":[4],"removingReplicas":[],"bumpLeaderEpoch":true,"ifLeaderEpoch":5,"ifPartitionEpoch":6}}`},
		{&ClientQuotaRecord{Changes: []QuotaChange{
			{Entity: QuotaEntity{User: Named("alice"), ClientID: DefaultName}, Key: "producer_byte_rate", Value: new(1048576.0)},
			{Entity: QuotaEntity{IP: Named("10.0.0.1")}, Key: "connection_creation_rate"},
		}},
			`{"v":1,"type":"ClientQuota","data":{"changes":[{"entity":{"user":{"name":"alice"},"clientID":{"default":true}},"key":"producer_byte_rate","value":1048576},{"entity":{"ip":{"name":"10.0.0.1"}},"key":"connection_creation_rate"}]}}`},
		{&PartitionChangeRecord{Topic: "t", Partition: 0},
			`{"v":1,"type":"PartitionChange","data":{"topic":"t","id":"AAAAAAAAAAAAAAAAAAAAAA","partition":0,"isr":null,"replicas":null,"addingReplicas":null,"removingReplicas":null}}`},
	}
}

// TestRecordEncodingGolden checks that every record kind encodes to the
// bytes existing metadata logs hold, and that those bytes decode to the
// record.
func TestRecordEncodingGolden(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range goldenRecords() {
		seen[g.rec.Type()] = true
		b, err := Encode(g.rec)
		if err != nil {
			t.Fatalf("encode %v: %v", g.rec.Type(), err)
		}
		if string(b) != g.want {
			t.Errorf("%v encodes as\n%s\nwant\n%s", g.rec.Type(), b, g.want)
		}
		got, err := Decode([]byte(g.want))
		if err != nil {
			t.Errorf("decode %s: %v", g.want, err)
			continue
		}
		if !reflect.DeepEqual(got, g.rec) {
			t.Errorf("%s decodes as %+v, want %+v", g.want, got, g.rec)
		}
	}
	for _, kind := range recordKinds {
		if typ := kind().Type(); !seen[typ] {
			t.Errorf("no golden record of kind %s", typ)
		}
	}
}
