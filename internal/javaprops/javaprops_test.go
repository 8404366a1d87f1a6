package javaprops

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	text := "# comment\n! also\n  bootstrap.servers = a:1,b:2\nsasl.mechanism:SCRAM-SHA-512\n" +
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n" +
		"    username=\"alice\" \\\n    password=\"p\\\\\\\"w\";\n" +
		"ssl.truststore.location /tmp/x\\u00e9.p12\nempty=\n"
	got, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Property{
		{"bootstrap.servers", "a:1,b:2"},
		{"sasl.mechanism", "SCRAM-SHA-512"},
		{"sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="p\"w";`},
		{"ssl.truststore.location", "/tmp/xé.p12"},
		{"empty", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}
