package metadata

import (
	"fmt"
	"maps"
	"slices"
)

// Feature is a feature flag (KIP-584) klog knows: the levels it supports
// and the level a new cluster finalizes, Kafka 4.4's default. A level of 0
// is the feature off; ApiVersions lists only finalized levels above 0, as
// Kafka does.
type Feature struct {
	Name     string
	Min, Max int16
	Default  int16
	// Enables says what the finalized level turns on, for
	// docs/compatibility.md.
	Enables string
	// Fixed, when set, is why klog refuses to lower the level below
	// Default although it supports lower levels: the refusal's message
	// (metadata.version's refusals are Kafka's own).
	Fixed string
}

// GroupVersion is the feature whose level 1 serves KIP-848 consumer
// groups (ConsumerGroupHeartbeat, ConsumerGroupDescribe).
const GroupVersion = "group.version"

// ShareVersion is the feature whose level 1 serves KIP-932 share groups
// (ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge).
const ShareVersion = "share.version"

// MetadataVersion is Kafka's metadata.version, klog's fixed at Kafka
// 4.4-IV2's level.
const MetadataVersion = "metadata.version"

// features are the feature flags klog knows, by name. The levels each
// supports are the ones it honours: streams.version,
// eligible.leader.replicas.version and kraft.version are at 0, since klog
// has no streams groups, ELR or KRaft voters to turn on; share.version
// stops at 1 (level 2 adds dead-letter queues).
var features = []Feature{
	{Name: "eligible.leader.replicas.version", Enables: "nothing: klog has no eligible leader replicas (KIP-966); Kafka 4.4 finalizes 1"},
	{Name: GroupVersion, Max: 1, Default: 1, Enables: "KIP-848 consumer groups: ConsumerGroupHeartbeat, ConsumerGroupDescribe (at 0 both answer UNSUPPORTED_VERSION)"},
	{Name: "kraft.version", Enables: "nothing: level 1 is KIP-853's dynamic voter set, and klog's metadata quorum is its own Raft with static voters; Kafka 4.4 finalizes 1"},
	{Name: MetadataVersion, Min: 7, Max: 33, Default: 33, Enables: "the cluster behaves as Kafka 4.4-IV2 (level 33)",
		Fixed: "Kafka 4.4 refuses every metadata.version downgrade, and klog answers as it does."},
	{Name: ShareVersion, Max: 1, Default: 1, Enables: "KIP-932 share groups: ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge (at 0 they answer UNSUPPORTED_VERSION); Kafka 4.4 finalizes 2, whose share groups' dead-letter queues klog does not have"},
	{Name: "streams.version", Enables: "nothing: klog has no streams groups (KIP-1071); Kafka 4.4 finalizes 1"},
	{Name: "transaction.version", Max: 2, Default: 2,
		Enables: "KIP-890 part 2: produce v12+ and TxnOffsetCommit v5+ add to the transaction, EndTxn v5 bumps the epoch; clients of every level are served",
		Fixed:   "klog's transaction coordinator runs transaction version 2 only (an abort it forces bumps the epoch), so the level stays 2."},
}

// Features lists the feature flags klog knows, by name.
func Features() []Feature { return slices.Clone(features) }

// FeatureByName returns the feature flag named name.
func FeatureByName(name string) (Feature, bool) {
	i := slices.IndexFunc(features, func(f Feature) bool { return f.Name == name })
	if i < 0 {
		return Feature{}, false
	}
	return features[i], true
}

// FeatureLevel is one feature's finalized level.
type FeatureLevel struct {
	Name  string `json:"name"`
	Level int16  `json:"level"`
}

// FeatureLevelRecord finalizes new levels of features, all or none, as
// one UpdateFeatures changes them (Kafka writes a FeatureLevelRecord per
// feature in one atomic batch). A feature klog does not know, a level
// outside its supported range, or a feature named twice rejects it.
type FeatureLevelRecord struct {
	Levels []FeatureLevel `json:"levels"`
}

// Type returns "FeatureLevel".
func (*FeatureLevelRecord) Type() string { return "FeatureLevel" }

// apply applies the record to img (see Image.Apply).
func (r *FeatureLevelRecord) apply(img *Image) (*Image, error) {
	if len(r.Levels) == 0 {
		return nil, fmt.Errorf("%w: feature level record without levels", ErrInvalidRecord)
	}
	levels := cloneOrNew(img.FeatureLevels)
	seen := map[string]bool{}
	for _, l := range r.Levels {
		if err := checkFeatureLevel(l); err != nil {
			return nil, err
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("%w: feature %s twice", ErrInvalidRecord, l.Name)
		}
		seen[l.Name] = true
		levels[l.Name] = l.Level
	}
	n := img.shallowCopy()
	n.FeatureLevels = levels
	return n, nil
}

// checkFeatureLevel checks that l is a level of a feature klog knows, in
// the range it supports.
func checkFeatureLevel(l FeatureLevel) error {
	f, ok := FeatureByName(l.Name)
	switch {
	case !ok:
		return fmt.Errorf("%w: unknown feature %q", ErrInvalidRecord, l.Name)
	case l.Level < f.Min || l.Level > f.Max:
		return fmt.Errorf("%w: feature %s level %d outside %d-%d", ErrInvalidRecord, l.Name, l.Level, f.Min, f.Max)
	}
	return nil
}

// FeatureLevel is the finalized level of the feature named name: the
// level a FeatureLevelRecord set, else the feature's default; 0 for a
// feature klog does not know.
func (img *Image) FeatureLevel(name string) int16 {
	if l, ok := img.FeatureLevels[name]; ok {
		return l
	}
	f, _ := FeatureByName(name)
	return f.Default
}

// FinalizedFeatures are the features finalized above level 0, by name,
// as ApiVersions lists them.
func (img *Image) FinalizedFeatures() []FeatureLevel {
	var out []FeatureLevel
	for _, f := range features {
		if l := img.FeatureLevel(f.Name); l > 0 {
			out = append(out, FeatureLevel{Name: f.Name, Level: l})
		}
	}
	return out
}

// decodeFeatureLevels sets the feature levels of an image being decoded,
// checked as FeatureLevelRecord checks them.
func (img *Image) decodeFeatureLevels(levels map[string]int16) error {
	if len(levels) == 0 {
		return nil
	}
	rec := &FeatureLevelRecord{}
	for _, name := range slices.Sorted(maps.Keys(levels)) {
		rec.Levels = append(rec.Levels, FeatureLevel{Name: name, Level: levels[name]})
	}
	n, err := rec.apply(img)
	if err != nil {
		return fmt.Errorf("%w: image: %v", ErrMalformedRecord, err)
	}
	img.FeatureLevels = n.FeatureLevels
	return nil
}
