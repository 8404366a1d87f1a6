package metadata

import (
	"strings"
	"testing"
)

// TestFeatureLevelsInSnapshot: a level set by a record survives the
// image's snapshot, level 0 too (group.version's default is 1), and a
// snapshot with a level klog does not support is refused.
func TestFeatureLevelsInSnapshot(t *testing.T) {
	img, err := Empty().Apply(&FeatureLevelRecord{Levels: []FeatureLevel{{Name: GroupVersion, Level: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodeImage(img)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeImage(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.FeatureLevel(GroupVersion); got != 0 {
		t.Errorf("group.version after a snapshot = %d, want 0", got)
	}
	if got := Empty().FeatureLevel(GroupVersion); got != 1 {
		t.Errorf("group.version of a fresh image = %d, want its default 1", got)
	}
	bad := strings.Replace(string(b), `"group.version":0`, `"group.version":7`, 1)
	if _, err := DecodeImage([]byte(bad)); err == nil {
		t.Errorf("a snapshot with group.version 7 decoded")
	}
}
