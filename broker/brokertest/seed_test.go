package brokertest_test

import (
	"context"
	"slices"
	"testing"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/seed"
)

// Seed creates a seed file's topics with their records before New
// returns, as klog up --seed does.
func TestSeedFile(t *testing.T) {
	spec, err := seed.Parse([]byte(`
topics:
  - name: greetings
    partitions: 1
    records:
      - {key: a, value: hello}
      - {key: b, value: world}
`))
	if err != nil {
		t.Fatal(err)
	}
	c := brokertest.New(t, brokertest.Seed(spec), brokertest.Topic("empty", 2, 1))
	got := consumeAll(context.Background(), t, c.Bootstrap(), "greetings", 2)
	if !slices.Equal(got, []string{"hello", "world"}) {
		t.Fatalf("greetings holds %q, want the seed's two records", got)
	}
}
