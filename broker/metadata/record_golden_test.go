package metadata

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
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
		{&RegisterBrokerRecord{Broker: Broker{ID: 1, Host: "h", Port: 9092, Endpoints: []Endpoint{{Name: "PLAINTEXT", Host: "h", Port: 9092, Protocol: "PLAINTEXT"}, {Name: "CLIENT", Host: "c", Port: 9093, Protocol: "SASL_SSL"}}}},
			`{"v":1,"type":"RegisterBroker","data":{"broker":{"id":1,"host":"h","port":9092,"endpoints":[{"name":"PLAINTEXT","host":"h","port":9092,"protocol":"PLAINTEXT"},{"name":"CLIENT","host":"c","port":9093,"protocol":"SASL_SSL"}]}}}`},
		{&UnregisterBrokerRecord{ID: 2, Incarnation: inc},
			`{"v":1,"type":"UnregisterBroker","data":{"id":2,"incarnation":"AAAAAAAAAAAAAAAAAAAACQ"}}`},
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
		{&AlterTopicConfigsRecord{ClientMetrics: new("sub"), Set: map[string]string{"interval.ms": "1000"}},
			`{"v":1,"type":"AlterTopicConfigs","data":{"topic":"","id":"AAAAAAAAAAAAAAAAAAAAAA","clientMetrics":"sub","set":{"interval.ms":"1000"}}}`},
		{&AlterSCRAMCredentialsRecord{
			Upsert: []SCRAMCredential{{User: "alice", Mechanism: "SCRAM-SHA-512", Salt: []byte("salt"), StoredKey: []byte("stored"), ServerKey: []byte("server"), Iterations: 8192}},
			Delete: []SCRAMUser{{User: "bob", Mechanism: "SCRAM-SHA-256"}}},
			`{"v":1,"type":"AlterSCRAMCredentials","data":{"upsert":[{"user":"alice","mechanism":"SCRAM-SHA-512","salt":"c2FsdA==","storedKey":"c3RvcmVk","serverKey":"c2VydmVy","iterations":8192}],"delete":[{"user":"bob","mechanism":"SCRAM-SHA-256"}]}}`},
		{&AllocateProducerIDsRecord{BlockSize: 1000},
			`{"v":1,"type":"AllocateProducerIDs","data":{"blockSize":1000}}`},
		{&PartitionChangeRecord{Topic: "t", ID: testID(1), Partition: 4, Leader: new(int32(2)), ISR: []int32{2, 3}, Replicas: []int32{2, 3, 4},
			AddingReplicas: []int32{4}, RemovingReplicas: []int32{}, BumpLeaderEpoch: true, IfLeaderEpoch: new(int32(5)), IfPartitionEpoch: new(int32(6))},
			`{"v":1,"type":"PartitionChange","data":{"topic":"t","id":"AAAAAAAAAAAAAAAAAAAAAQ","partition":4,"leader":2,"isr":[2,3],"replicas":[2,3,4],"addingReplicas":[4],"removingReplicas":[],"bumpLeaderEpoch":true,"ifLeaderEpoch":5,"ifPartitionEpoch":6}}`},
		{&CreateACLsRecord{ACLs: []ACLEntry{{ID: testID(2), ACL: ACL{ResourceType: kmsg.ACLResourceTypeTopic, ResourceName: "orders", PatternType: kmsg.ACLResourcePatternTypePrefixed,
			Principal: "User:alice", Host: "10.0.0.0/8", Operation: kmsg.ACLOperationWrite, Permission: kmsg.ACLPermissionTypeDeny}}}},
			`{"v":1,"type":"CreateACLs","data":{"acls":[{"id":"AAAAAAAAAAAAAAAAAAAAAg","acl":{"resourceType":"TOPIC","resourceName":"orders","patternType":"PREFIXED","principal":"User:alice","host":"10.0.0.0/8","operation":"WRITE","permission":"DENY"}}]}}`},
		{&RemoveACLsRecord{IDs: []UUID{testID(2)}},
			`{"v":1,"type":"RemoveACLs","data":{"ids":["AAAAAAAAAAAAAAAAAAAAAg"]}}`},
		{&ClientQuotaRecord{Changes: []QuotaChange{
			{Entity: QuotaEntity{User: Named("alice"), ClientID: DefaultName}, Key: "producer_byte_rate", Value: new(1048576.0)},
			{Entity: QuotaEntity{IP: Named("10.0.0.1")}, Key: "connection_creation_rate"},
		}},
			`{"v":1,"type":"ClientQuota","data":{"changes":[{"entity":{"user":{"name":"alice"},"clientID":{"default":true}},"key":"producer_byte_rate","value":1048576},{"entity":{"ip":{"name":"10.0.0.1"}},"key":"connection_creation_rate"}]}}`},
		{&DelegationTokenRecord{Create: true, Token: DelegationToken{TokenID: "tok", Owner: "User:alice", Requester: "User:admin",
			Renewers: []string{"User:bob"}, IssueMs: 1, MaxMs: 3, ExpiryMs: 2}},
			`{"v":1,"type":"DelegationToken","data":{"create":true,"token":{"tokenID":"tok","owner":"User:alice","requester":"User:admin","renewers":["User:bob"],"issueMs":1,"maxMs":3,"expiryMs":2}}}`},
		{&RemoveDelegationTokenRecord{TokenID: "tok"},
			`{"v":1,"type":"RemoveDelegationToken","data":{"tokenID":"tok"}}`},
		{&FeatureLevelRecord{Levels: []FeatureLevel{{Name: "group.version", Level: 0}}},
			`{"v":1,"type":"FeatureLevel","data":{"levels":[{"name":"group.version","level":0}]}}`},
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

// TestBrokerEndpointsOfOldRecord checks that a registration written
// before brokers had several listeners reads as one PLAINTEXT listener
// at its host and port, and names no other.
func TestBrokerEndpointsOfOldRecord(t *testing.T) {
	rec, err := Decode([]byte(`{"v":1,"type":"RegisterBroker","data":{"broker":{"id":2,"host":"h","port":9092}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b := rec.(*RegisterBrokerRecord).Broker
	if addr, ok := b.EndpointAddr("PLAINTEXT"); !ok || addr != "h:9092" {
		t.Errorf("PLAINTEXT endpoint %q, %v; want h:9092", addr, ok)
	}
	if _, ok := b.Endpoint("SASL_SSL"); ok {
		t.Error("an old registration has a SASL_SSL endpoint")
	}
	withEndpoints := Broker{Host: "h", Port: 1, Endpoints: []Endpoint{{Name: "CLIENT", Host: "c", Port: 2, Protocol: "SSL"}}}
	if addr, ok := withEndpoints.EndpointAddr("CLIENT"); !ok || addr != "c:2" {
		t.Errorf("CLIENT endpoint %q, %v; want c:2", addr, ok)
	}
	if _, ok := withEndpoints.Endpoint("PLAINTEXT"); ok {
		t.Error("a broker without a PLAINTEXT listener has its endpoint")
	}
}

// TestBrokerEqualComparesEveryField checks that Broker.Equal, which
// lists the fields it compares, tells apart brokers differing in any.
func TestBrokerEqualComparesEveryField(t *testing.T) {
	base := Broker{ID: 1, Host: "h", Port: 1, Endpoints: []Endpoint{{Name: "A"}}}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		other := base
		v := reflect.ValueOf(&other).Elem().Field(i)
		switch v.Kind() {
		case reflect.Slice:
			v.Set(reflect.ValueOf([]Endpoint{{Name: "B"}}))
		case reflect.Bool:
			v.SetBool(true)
		case reflect.String:
			v.SetString("x")
		case reflect.Int32:
			v.SetInt(7)
		case reflect.Array:
			v.Index(0).SetUint(1)
		default:
			t.Fatalf("field %s of kind %s: extend this test", typ.Field(i).Name, v.Kind())
		}
		if base.Equal(other) {
			t.Errorf("Equal ignores %s", typ.Field(i).Name)
		}
	}
	if !base.Equal(Broker{ID: 1, Host: "h", Port: 1, Endpoints: []Endpoint{{Name: "A"}}}) {
		t.Error("Equal tells apart equal brokers")
	}
}
