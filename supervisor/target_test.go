//go:build linux

package supervisor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/klogdev/klog/internal/testkit"
)

// TestPick: of two clusters on the same ports, the one in another network
// namespace is never picked by its addresses, only by its data directory;
// the brokers' cluster id picks among clusters on the same addresses;
// several that fit are an error naming each; a dead one's registration
// is removed.
func TestPick(t *testing.T) {
	ctx := context.Background()
	stateDir := t.TempDir()
	brokers := []string{"127.0.0.1:9092", "127.0.0.1:9093"}
	ours := Registration{PID: testkit.DummyProcess(t), DataDir: "/d/ours", Brokers: brokers, ClusterID: "ours-id"}
	other := Registration{PID: testkit.DummyProcess(t), DataDir: "/d/other", Brokers: brokers, ClusterID: "other-id", NetNS: "net:[1]"}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := Registration{PID: gone.Process.Pid, DataDir: "/d/dead", Brokers: brokers}
	var deadPath string
	for _, r := range []Registration{ours, other, dead} {
		p, err := register(stateDir, r)
		if err != nil {
			t.Fatal(err)
		}
		deadPath = p
	}
	idIs := func(id string, err error) func(context.Context) (string, error) {
		return func(context.Context) (string, error) { return id, err }
	}
	for _, tc := range []struct {
		name string
		t    Target
		want string // data dir; "" for ErrNotFound
	}{
		{"nothing given", Target{}, "/d/ours"},
		{"brokers", Target{Brokers: brokers[1:]}, "/d/ours"},
		{"brokers of our id", Target{Brokers: brokers[1:], ClusterID: idIs("ours-id", nil)}, "/d/ours"},
		{"brokers without answer", Target{Brokers: brokers[1:], ClusterID: idIs("", errors.New("refused"))}, "/d/ours"},
		{"brokers of the other's id", Target{Brokers: brokers[1:], ClusterID: idIs("other-id", nil)}, ""},
		{"other brokers", Target{Brokers: []string{"127.0.0.1:9094"}}, ""},
		{"data dir in another namespace", Target{DataDir: "/d/other"}, "/d/other"},
		{"dead data dir", Target{DataDir: "/d/dead"}, ""},
	} {
		r, err := Pick(ctx, stateDir, tc.t)
		switch {
		case tc.want == "" && !errors.Is(err, ErrNotFound):
			t.Errorf("%s: %+v, %v; want ErrNotFound", tc.name, r, err)
		case tc.want != "" && (err != nil || r.DataDir != tc.want):
			t.Errorf("%s: %+v, %v; want %s", tc.name, r, err, tc.want)
		}
	}
	if _, err := os.Stat(deadPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead cluster's registration is still there: %v", err)
	}
	_, err := Pick(ctx, stateDir, Target{Brokers: []string{"127.0.0.1:9094"}})
	if msg := err.Error(); !strings.Contains(msg, "in others: data dir /d/other, cluster id other-id") {
		t.Errorf("not found: %q does not name the cluster of the other namespace", msg)
	}

	twin := Registration{PID: testkit.DummyProcess(t), DataDir: "/d/twin", Brokers: brokers, ClusterID: "twin-id"}
	if _, err := register(stateDir, twin); err != nil {
		t.Fatal(err)
	}
	for _, tg := range []Target{{}, {Brokers: brokers}, {Brokers: brokers, ClusterID: idIs("", errors.New("refused"))}} {
		_, err := Pick(ctx, stateDir, tg)
		var amb *AmbiguousError
		if !errors.As(err, &amb) || len(amb.Candidates) != 2 {
			t.Fatalf("%+v with two clusters here: %v; want both", tg, err)
		}
		for _, r := range []Registration{ours, twin} {
			if !strings.Contains(err.Error(), r.Describe()) {
				t.Errorf("%+v: %q does not name %s", tg, err, r.Describe())
			}
		}
		if strings.Contains(err.Error(), "/d/other") {
			t.Errorf("%+v: %q names the cluster of another namespace", tg, err)
		}
	}
	if r, err := Pick(ctx, stateDir, Target{Brokers: brokers, ClusterID: idIs("twin-id", nil)}); err != nil || r.DataDir != "/d/twin" {
		t.Errorf("brokers of the twin's id: %+v, %v", r, err)
	}
}
