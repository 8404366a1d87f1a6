package seed

import (
	"errors"
	"testing"
)

func TestParseFile(t *testing.T) {
	s, err := ParseFile("testdata/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Topics) != 2 {
		t.Fatalf("topics: %+v", s.Topics)
	}
	orders, customers := s.Topics[0], s.Topics[1]
	if orders.Name != "orders" || orders.Partitions != 3 || orders.ReplicationFactor != 1 || orders.Configs["retention.ms"] != "86400000" {
		t.Errorf("orders: %+v", orders)
	}
	if r := orders.Records[0]; *r.Key != "order-1" || len(r.Headers) != 2 || r.Headers[1].Value != "testdata" || r.Partition != nil {
		t.Errorf("orders record 0: %+v", r)
	}
	if p := orders.Records[1].Partition; p == nil || *p != 2 {
		t.Errorf("orders record 1 partition: %v", p)
	}
	if customers.partitions() != 1 || customers.Records[1].Value != nil {
		t.Errorf("customers: %+v", customers)
	}
}

func TestParseJSON(t *testing.T) {
	s, err := Parse([]byte(`{"topics":[{"name":"a","partitions":2,"records":[{"key":"k","value":"v"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Topics) != 1 || s.Topics[0].Partitions != 2 || *s.Topics[0].Records[0].Value != "v" {
		t.Fatalf("%+v", s)
	}
}

func TestParseErrors(t *testing.T) {
	for _, doc := range []string{
		`topics: [{name: a, partitons: 3}]`,              // misspelt field
		`topics: [{partitions: 3}]`,                      // no name
		`topics: [{name: a}, {name: a}]`,                 // twice
		`topics: [{name: a, records: [{partition: 1}]}]`, // no such partition
		`topics: [{name: a, partitions: 2, records: [{partition: -1}]}]`,
	} {
		if _, err := Parse([]byte(doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q): %v, want ErrInvalid", doc, err)
		}
	}
}

func TestParseTopic(t *testing.T) {
	for in, want := range map[string]Topic{
		"orders:3":   {Name: "orders", Partitions: 3},
		"orders:3:1": {Name: "orders", Partitions: 3, ReplicationFactor: 1},
	} {
		got, err := ParseTopic(in)
		if err != nil || got.Name != want.Name || got.Partitions != want.Partitions || got.ReplicationFactor != want.ReplicationFactor {
			t.Errorf("ParseTopic(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"orders", ":3", "orders:0", "orders:x", "orders:3:0", "orders:3:1:2"} {
		if _, err := ParseTopic(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseTopic(%q): %v, want ErrInvalid", in, err)
		}
	}
}

func TestMerge(t *testing.T) {
	s := Spec{Topics: []Topic{{Name: "a", Partitions: 3}}}
	if err := s.Merge(Spec{Topics: []Topic{{Name: "a", Partitions: 3}, {Name: "b"}}}); err != nil || len(s.Topics) != 2 {
		t.Fatalf("merge: %v, %+v", err, s)
	}
	if err := s.Merge(Spec{Topics: []Topic{{Name: "a", Partitions: 4}}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("merge of another shape: %v, want ErrConflict", err)
	}
}
