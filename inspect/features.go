package inspect

import (
	"context"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Feature is one feature flag (KIP-584) as a broker's ApiVersions
// reports it: the levels it supports and the level finalized in the
// cluster, 0 when none is (a broker lists no feature at level 0).
type Feature struct {
	Name         string `json:"name"`
	SupportedMin int16  `json:"supportedMin"`
	SupportedMax int16  `json:"supportedMax"`
	Finalized    int16  `json:"finalized"`
}

// Features are a cluster's feature flags, by name, with the epoch of
// their finalized levels.
type Features struct {
	Epoch    int64     `json:"epoch"`
	Features []Feature `json:"features"`
}

// ListFeatures reads the feature flags from one broker's ApiVersions, as
// Kafka's Admin.describeFeatures does. A feature finalized but not
// supported by the broker is listed with a supported range of 0-0.
func ListFeatures(ctx context.Context, cl *kgo.Client) (Features, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "klog", "1"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return Features{}, fmt.Errorf("api versions: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return Features{}, fmt.Errorf("api versions: %w", err)
	}
	byName := map[string]*Feature{}
	get := func(name string) *Feature {
		if f, ok := byName[name]; ok {
			return f
		}
		f := &Feature{Name: name}
		byName[name] = f
		return f
	}
	for _, s := range resp.SupportedFeatures {
		f := get(s.Name)
		f.SupportedMin, f.SupportedMax = s.MinVersion, s.MaxVersion
	}
	for _, l := range resp.FinalizedFeatures {
		get(l.Name).Finalized = l.MaxVersionLevel
	}
	out := Features{Epoch: resp.FinalizedFeaturesEpoch, Features: make([]Feature, 0, len(byName))}
	for _, f := range byName {
		out.Features = append(out.Features, *f)
	}
	sort.Slice(out.Features, func(i, j int) bool { return out.Features[i].Name < out.Features[j].Name })
	return out, nil
}

// FeatureLevel is a level to finalize for a feature.
type FeatureLevel struct {
	Name  string `json:"name"`
	Level int16  `json:"level"`
}

// FeatureChange is how UpdateFeatures may move the levels: UpgradeType's
// values, Kafka's.
type FeatureChange int8

// The kinds of change of UpdateFeatures.
const (
	FeatureUpgrade         FeatureChange = 1
	FeatureSafeDowngrade   FeatureChange = 2
	FeatureUnsafeDowngrade FeatureChange = 3
)

// UpdateFeatures finalizes levels, all or none, with one UpdateFeatures
// (validateOnly: checked, not finalized). A refusal is returned as the
// broker's error code with its message, which says why.
func UpdateFeatures(ctx context.Context, cl *kgo.Client, levels []FeatureLevel, change FeatureChange, validateOnly bool) error {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.TimeoutMillis = 30000
	req.ValidateOnly = validateOnly
	for _, l := range levels {
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = l.Name, l.Level, int8(change)
		u.AllowDowngrade = change != FeatureUpgrade // what a broker answering v0 reads
		req.FeatureUpdates = append(req.FeatureUpdates, u)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("update features: %w", err)
	}
	check := func(code int16, msg *string) error {
		err := kerr.ErrorForCode(code)
		if ErrorText(err, deref(msg)) != ErrorText(err, "") {
			return fmt.Errorf("%w: %s", err, *msg)
		}
		return err
	}
	if err := check(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return err
	}
	for _, r := range resp.Results {
		if err := check(r.ErrorCode, r.ErrorMessage); err != nil {
			return fmt.Errorf("%s: %w", r.Feature, err)
		}
	}
	return nil
}
