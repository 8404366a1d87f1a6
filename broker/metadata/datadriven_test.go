package metadata

import (
	"bytes"
	"encoding"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestDataDriven runs the metadata state machine scripts in testdata/.
//
// Commands that change the image build a record, round-trip it through
// Encode and Decode, apply it at the next log index, check the previous
// image was not modified, and print "ok" or the rejection:
//
//	cluster-id id=<s>
//	register-broker id=<n> host=<h> port=<n> [rack=<r>] [fenced] [shutting-down]
//	controller id=<n>
//	create-topic name=<s> id=<n> [internal]     input: "<p>: <r1>,<r2>..." and "config k=v" lines
//	delete-topic name=<s> [id=<n>]
//	create-partitions topic=<s> [id=<n>]        input: "<p>: <r1>,<r2>..." lines
//	alter-configs topic=<s> [id=<n>] [replace]  input: "set k=v" and "delete k" lines
//	alloc-pids size=<n>
//	partition-change topic=<s> partition=<n> [leader=<n>] [isr=<a,b>] [replicas=<a,b>]
//	                 [adding=<a,b>] [removing=<a,b>] [bump-leader-epoch]
//	                 [if-leader-epoch=<n>] [if-partition-epoch=<n>]
//	create-acls                                 input: "<id> <type> <name> <pattern> <principal> <host> <op> <perm>" lines
//	remove-acls ids=<a,b>
//	client-quota                                input: "<entity> set k=v" and "<entity> remove k"
//	                                            lines; <entity> is user=<u>,client-id=<c>,ip=<a>
//	                                            parts, "default" for a kind's default
//	raw                                         input: an encoded record
//
// Other commands:
//
//	show     prints the image
//	features prints the features finalized above level 0 (FinalizedFeatures)
//	replay   re-applies the whole log to the image (must be a no-op) and
//	         to an empty image (must rebuild the same image)
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scriptState{img: Empty()}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return s.run(t, d)
		})
	})
}

type logEntry struct {
	index uint64
	rec   []byte
}

type scriptState struct {
	img *Image
	log []logEntry
}

func (s *scriptState) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "show":
		return dumpImage(s.img)
	case "replay":
		return s.replay(t)
	case "features":
		var levels []string
		for _, l := range s.img.FinalizedFeatures() {
			levels = append(levels, fmt.Sprintf("%s=%d", l.Name, l.Level))
		}
		return strings.Join(levels, " ") + "\n"
	case "raw":
		rec, err := Decode([]byte(strings.TrimSpace(d.Input)))
		if err != nil {
			return "decode error: " + err.Error() + "\n"
		}
		return s.apply(t, rec)
	}
	rec, err := parseRecord(d)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	return s.apply(t, rec)
}

func (s *scriptState) apply(t *testing.T, rec Record) string {
	b, err := Encode(rec)
	if err != nil {
		return "encode error: " + err.Error() + "\n"
	}
	dec, err := Decode(b)
	if err != nil {
		t.Fatalf("decode of encoded %s: %v", b, err)
	}
	before := mustEncodeImage(t, s.img)
	index := s.img.Index + 1
	next, err := s.img.ApplyEntry(index, dec)
	if after := mustEncodeImage(t, s.img); !bytes.Equal(before, after) {
		t.Fatalf("apply modified the old image:\n%s\n%s", before, after)
	}
	if next.Index != index {
		t.Fatalf("index %d after applying entry %d", next.Index, index)
	}
	s.log = append(s.log, logEntry{index: index, rec: b})
	s.img = next
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return "ok\n"
}

func (s *scriptState) replay(t *testing.T) string {
	want := mustEncodeImage(t, s.img)
	again, fresh := s.img, Empty()
	for _, e := range s.log {
		rec, err := Decode(e.rec)
		if err != nil {
			t.Fatalf("decode log entry %d: %v", e.index, err)
		}
		if again, err = again.ApplyEntry(e.index, rec); err != nil {
			t.Fatalf("re-applying entry %d: %v", e.index, err)
		}
		fresh, _ = fresh.ApplyEntry(e.index, rec)
	}
	var out strings.Builder
	if got := mustEncodeImage(t, again); !bytes.Equal(got, want) {
		fmt.Fprintf(&out, "re-applied image differs:\n%s\n", got)
	}
	if got := mustEncodeImage(t, fresh); !bytes.Equal(got, want) {
		fmt.Fprintf(&out, "rebuilt image differs:\n%s\n", got)
	}
	dec, err := DecodeImage(want)
	if err != nil {
		fmt.Fprintf(&out, "decode image: %v\n", err)
	} else if got := mustEncodeImage(t, dec); !bytes.Equal(got, want) {
		fmt.Fprintf(&out, "decoded image differs:\n%s\n", got)
	}
	if out.Len() == 0 {
		return fmt.Sprintf("ok: %d entries\n", len(s.log))
	}
	return out.String()
}

func mustEncodeImage(t *testing.T, img *Image) []byte {
	t.Helper()
	b, err := EncodeImage(img)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testID(n int) UUID {
	var id UUID
	id[14], id[15] = byte(n>>8), byte(n)
	return id
}

func parseRecord(d *datadriven.TestData) (Record, error) {
	args := map[string]string{}
	for _, a := range d.CmdArgs {
		args[a.Key] = strings.Join(a.Vals, ",")
	}
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(args[k], 10, 64)
		return n
	}
	optID := func() UUID {
		if _, ok := args["id"]; !ok {
			return UUID{}
		}
		return testID(int(num("id")))
	}
	_, flag := args["internal"]
	switch d.Cmd {
	case "cluster-id":
		return &SetClusterIDRecord{ClusterID: args["id"]}, nil
	case "register-broker":
		_, fenced := args["fenced"]
		_, shutting := args["shutting-down"]
		_, unclean := args["unclean-shutdown"]
		b := Broker{
			ID: int32(num("id")), Host: args["host"], Port: int32(num("port")), Rack: args["rack"], Fenced: fenced, ShuttingDown: shutting,
			UncleanShutdown: unclean,
		}
		if _, ok := args["incarnation"]; ok {
			b.Incarnation = testID(int(num("incarnation")))
		}
		r := &RegisterBrokerRecord{Broker: b}
		if _, ok := args["if-incarnation"]; ok {
			inc := testID(int(num("if-incarnation")))
			r.IfIncarnation = &inc
		}
		return r, nil
	case "unregister-broker":
		return &UnregisterBrokerRecord{ID: int32(num("id")), Incarnation: testID(int(num("incarnation")))}, nil
	case "controller":
		return &SetControllerRecord{ID: int32(num("id"))}, nil
	case "create-topic":
		parts, cfg, err := parsePartitions(d.Input)
		if err != nil {
			return nil, err
		}
		return &CreateTopicRecord{
			Name: args["name"], ID: optID(), Partitions: parts, Configs: cfg, Internal: flag,
		}, nil
	case "delete-topic":
		return &DeleteTopicRecord{Name: args["name"], ID: optID()}, nil
	case "create-partitions":
		parts, _, err := parsePartitions(d.Input)
		if err != nil {
			return nil, err
		}
		return &CreatePartitionsRecord{Topic: args["topic"], ID: optID(), Partitions: parts}, nil
	case "alter-configs":
		_, replace := args["replace"]
		r := &AlterTopicConfigsRecord{Topic: args["topic"], ID: optID(), Replace: replace}
		if b, ok := args["broker"]; ok {
			r.Broker = &b
		}
		if cm, ok := args["client-metrics"]; ok {
			r.ClientMetrics = &cm
		}
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "set":
				k, v, _ := strings.Cut(f[1], "=")
				if r.Set == nil {
					r.Set = map[string]string{}
				}
				r.Set[k] = v
			case len(f) == 2 && f[0] == "delete":
				r.Delete = append(r.Delete, f[1])
			case len(f) == 0:
			default:
				return nil, fmt.Errorf("bad alter line %q", line)
			}
		}
		return r, nil
	case "scram":
		return parseSCRAM(d.Input)
	case "client-quota":
		return parseClientQuota(d.Input)
	case "token":
		_, create := args["create"]
		tok := DelegationToken{TokenID: args["id"], Owner: args["owner"], Requester: args["requester"],
			IssueMs: num("issue"), MaxMs: num("max"), ExpiryMs: num("expiry")}
		if v := args["renewers"]; v != "" {
			tok.Renewers = strings.Split(v, ",")
		}
		return &DelegationTokenRecord{Create: create, Token: tok}, nil
	case "feature-level":
		r := &FeatureLevelRecord{}
		for _, kv := range strings.Fields(d.Input) {
			name, level, _ := strings.Cut(kv, "=")
			l, _ := strconv.ParseInt(level, 10, 16)
			r.Levels = append(r.Levels, FeatureLevel{Name: name, Level: int16(l)})
		}
		return r, nil
	case "remove-token":
		return &RemoveDelegationTokenRecord{TokenID: args["id"]}, nil
	case "alloc-pids":
		return &AllocateProducerIDsRecord{BlockSize: num("size")}, nil
	case "create-acls":
		return parseCreateACLs(d.Input)
	case "remove-acls":
		r := &RemoveACLsRecord{}
		for _, n := range parseIDs(args["ids"]) {
			r.IDs = append(r.IDs, testID(int(n)))
		}
		return r, nil
	case "partition-change":
		r := &PartitionChangeRecord{Topic: args["topic"], ID: optID(), Partition: int32(num("partition"))}
		if _, ok := args["leader"]; ok {
			l := int32(num("leader"))
			r.Leader = &l
		}
		if v, ok := args["isr"]; ok {
			r.ISR = parseIDs(v)
		}
		if v, ok := args["replicas"]; ok {
			r.Replicas = parseIDs(v)
		}
		if v, ok := args["adding"]; ok {
			r.AddingReplicas = parseIDs(v)
		}
		if v, ok := args["removing"]; ok {
			r.RemovingReplicas = parseIDs(v)
		}
		_, r.BumpLeaderEpoch = args["bump-leader-epoch"]
		if _, ok := args["if-leader-epoch"]; ok {
			e := int32(num("if-leader-epoch"))
			r.IfLeaderEpoch = &e
		}
		if _, ok := args["if-partition-epoch"]; ok {
			e := int32(num("if-partition-epoch"))
			r.IfPartitionEpoch = &e
		}
		return r, nil
	}
	return nil, fmt.Errorf("unknown command %q", d.Cmd)
}

// parseCreateACLs parses "<id> <type> <name> <pattern> <principal>
// <host> <op> <perm>" lines.
func parseCreateACLs(input string) (Record, error) {
	r := &CreateACLsRecord{}
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		if len(f) != 8 {
			return nil, fmt.Errorf("bad acl line %q", line)
		}
		id, _ := strconv.Atoi(f[0])
		var a ACL
		for i, v := range []encoding.TextUnmarshaler{&a.ResourceType, &a.PatternType, &a.Operation, &a.Permission} {
			if err := v.UnmarshalText([]byte(f[[]int{1, 3, 6, 7}[i]])); err != nil {
				return nil, err
			}
		}
		a.ResourceName, a.Principal, a.Host = f[2], f[4], f[5]
		r.ACLs = append(r.ACLs, ACLEntry{ID: testID(id), ACL: a})
	}
	return r, nil
}

// parseClientQuota parses client-quota's input lines.
func parseClientQuota(input string) (Record, error) {
	r := &ClientQuotaRecord{}
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("bad client-quota line %q", line)
		}
		var c QuotaChange
		for _, part := range strings.Split(f[0], ",") {
			kind, name, _ := strings.Cut(part, "=")
			q := Named(name)
			if name == "default" {
				q = DefaultName
			}
			switch kind {
			case "user":
				c.Entity.User = q
			case "client-id":
				c.Entity.ClientID = q
			case "ip":
				c.Entity.IP = q
			case "none":
			default:
				return nil, fmt.Errorf("bad entity %q", f[0])
			}
		}
		switch f[1] {
		case "set":
			k, v, _ := strings.Cut(f[2], "=")
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, err
			}
			c.Key, c.Value = k, &n
		case "remove":
			c.Key = f[2]
		default:
			return nil, fmt.Errorf("bad client-quota line %q", line)
		}
		r.Changes = append(r.Changes, c)
	}
	return r, nil
}

// parsePartitions parses "<p>: <r1>,<r2>" lines (leader is the first
// replica, ISR all replicas) and "config k=v" lines.
func parsePartitions(input string) ([]Partition, map[string]string, error) {
	var parts []Partition
	var cfg map[string]string
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if kv, ok := strings.CutPrefix(line, "config "); ok {
			k, v, _ := strings.Cut(kv, "=")
			if cfg == nil {
				cfg = map[string]string{}
			}
			cfg[k] = v
			continue
		}
		p, reps, ok := strings.Cut(line, ":")
		if !ok {
			return nil, nil, fmt.Errorf("bad partition line %q", line)
		}
		idx, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("bad partition line %q", line)
		}
		ids := parseIDs(strings.TrimSpace(reps))
		leader := int32(-1)
		if len(ids) > 0 {
			leader = ids[0]
		}
		parts = append(parts, Partition{Index: int32(idx), Leader: leader, Replicas: ids, ISR: ids})
	}
	return parts, cfg, nil
}

func parseIDs(s string) []int32 {
	ids := []int32{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, _ := strconv.ParseInt(f, 10, 32)
		ids = append(ids, int32(n))
	}
	return ids
}

func dumpImage(img *Image) string {
	var b strings.Builder
	fmt.Fprintf(&b, "index=%d cluster=%q controller=%d next-producer-id=%d\n", img.Index, img.ClusterID, img.Controller, img.NextProducerID)
	for _, id := range img.SortedBrokerIDs() {
		br := img.Brokers[id]
		fmt.Fprintf(&b, "broker %d %s:%d", br.ID, br.Host, br.Port)
		if br.Rack != "" {
			fmt.Fprintf(&b, " rack=%s", br.Rack)
		}
		if br.Fenced {
			b.WriteString(" fenced")
		}
		if br.ShuttingDown {
			b.WriteString(" shutting-down")
		}
		if br.Incarnation != (UUID{}) {
			fmt.Fprintf(&b, " incarnation=%v", br.Incarnation)
		}
		if br.UncleanShutdown {
			b.WriteString(" unclean-shutdown")
		}
		b.WriteString("\n")
	}
	for _, name := range img.SortedTopicNames() {
		t := img.Topics[name]
		fmt.Fprintf(&b, "topic %s id=%v", t.Name, UUID(t.ID))
		if t.Internal {
			b.WriteString(" internal")
		}
		if byID, ok := img.TopicByID(t.ID); !ok || byID != t {
			b.WriteString(" (id index broken)")
		}
		b.WriteString("\n")
		keys := make([]string, 0, len(t.Configs))
		for k := range t.Configs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  config %s=%s\n", k, t.Configs[k])
		}
		for _, p := range t.Partitions {
			fmt.Fprintf(&b, "  p%d leader=%d leader-epoch=%d partition-epoch=%d replicas=%v isr=%v",
				p.Index, p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.Replicas, p.ISR)
			if p.Reassigning() {
				fmt.Fprintf(&b, " adding=%v removing=%v", p.AddingReplicas, p.RemovingReplicas)
			}
			b.WriteString("\n")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(img.BrokerConfigs)) {
		cfg := img.BrokerConfigs[name]
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			fmt.Fprintf(&b, "broker-config %q %s=%s\n", name, k, cfg[k])
		}
	}
	for _, name := range slices.Sorted(maps.Keys(img.ClientMetrics)) {
		cfg := img.ClientMetrics[name]
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			fmt.Fprintf(&b, "client-metrics %q %s=%s\n", name, k, cfg[k])
		}
	}
	for _, e := range img.ACLs.Sorted() {
		a := e.ACL
		fmt.Fprintf(&b, "acl %v %s:%s:%s %s@%s %s %s\n", e.ID, a.ResourceType, a.PatternType, a.ResourceName, a.Principal, a.Host, a.Operation, a.Permission)
	}
	for _, c := range img.SortedSCRAMCredentials() {
		fmt.Fprintf(&b, "scram %q %s iterations=%d salt=%q\n", c.User, c.Mechanism, c.Iterations, c.Salt)
	}
	for _, tok := range img.SortedDelegationTokens() {
		fmt.Fprintf(&b, "token %s owner=%s requester=%s renewers=%v issue=%d max=%d expiry=%d\n",
			tok.TokenID, tok.Owner, tok.Requester, tok.Renewers, tok.IssueMs, tok.MaxMs, tok.ExpiryMs)
	}
	for _, name := range slices.Sorted(maps.Keys(img.FeatureLevels)) {
		fmt.Fprintf(&b, "feature %s=%d\n", name, img.FeatureLevels[name])
	}
	for _, e := range img.SortedQuotaEntities() {
		q := img.ClientQuotas[e]
		for _, k := range slices.Sorted(maps.Keys(q)) {
			fmt.Fprintf(&b, "client-quota %s %s=%v\n", e, k, q[k])
		}
	}
	if len(img.TopicIDs) != len(img.Topics) {
		fmt.Fprintf(&b, "(%d topic ids for %d topics)\n", len(img.TopicIDs), len(img.Topics))
	}
	return b.String()
}

// parseSCRAM parses the lines of a scram command: "upsert USER MECHANISM
// ITERATIONS" (salt and keys made from the user's name) and "delete USER
// MECHANISM".
func parseSCRAM(input string) (Record, error) {
	r := &AlterSCRAMCredentialsRecord{}
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 4 && f[0] == "upsert":
			it, _ := strconv.ParseInt(f[3], 10, 32)
			r.Upsert = append(r.Upsert, SCRAMCredential{User: f[1], Mechanism: f[2], Iterations: int32(it),
				Salt: []byte("salt-" + f[1]), StoredKey: []byte("stored-" + f[1]), ServerKey: []byte("server-" + f[1])})
		case len(f) == 3 && f[0] == "delete":
			r.Delete = append(r.Delete, SCRAMUser{User: f[1], Mechanism: f[2]})
		default:
			return nil, fmt.Errorf("scram: %q is neither upsert USER MECH ITERATIONS nor delete USER MECH", line)
		}
	}
	return r, nil
}
