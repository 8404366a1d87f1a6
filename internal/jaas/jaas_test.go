package jaas

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	module, opts, err := Parse("org.example.Login required\n  username=\"al ice\" password=\"p\\\"w;=\" bare=word;")
	if err != nil || module != "org.example.Login" ||
		!reflect.DeepEqual(opts, map[string]string{"username": "al ice", "password": `p"w;=`, "bare": "word"}) {
		t.Fatalf("Parse: %q %v %v", module, opts, err)
	}
	for _, bad := range []string{
		"", "org.example.Login required", "org.example.Login maybe a=b;", "org.example.Login required a=;",
		"org.example.Login required a b;", `org.example.Login required a="open;`, "= required;",
	} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}
