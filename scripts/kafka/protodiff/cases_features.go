package main

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's feature level cases: UpdateFeatures' checks, each in a
// validate-only request that changes nothing (but v0, which has no
// ValidateOnly, and is refused), and one round trip of group.version
// down to 0 and back, with what ApiVersions and KIP-848's APIs answer
// between.

// featureUpdate is one update of UpdateFeatures.
type featureUpdate struct {
	name  string
	level int16
	typ   int8
}

// updateFeaturesReq is an UpdateFeatures at version of updates.
func updateFeaturesReq(version int16, validateOnly bool, updates ...featureUpdate) *kmsg.UpdateFeaturesRequest {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.SetVersion(version)
	req.TimeoutMillis, req.ValidateOnly = 30000, validateOnly
	req.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{}
	for _, u := range updates {
		fu := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		fu.Feature, fu.MaxVersionLevel, fu.UpgradeType = u.name, u.level, u.typ
		fu.AllowDowngrade = u.typ >= 2
		req.FeatureUpdates = append(req.FeatureUpdates, fu)
	}
	return req
}

func featureCases() []testCase {
	check := func(name string, version int16, updates ...featureUpdate) testCase {
		return testCase{"updatefeatures-" + name, noSetup(func(*side) kmsg.Request { return updateFeaturesReq(version, version >= 1, updates...) })}
	}
	return []testCase{
		check("same-level", 1, featureUpdate{"group.version", 1, 1}),
		check("downgrade-as-upgrade", 1, featureUpdate{"group.version", 0, 1}),
		check("safe-downgrade-validate", 1, featureUpdate{"group.version", 0, 2}),
		check("unsafe-downgrade-validate", 1, featureUpdate{"group.version", 0, 3}),
		check("upgrade-as-downgrade", 1, featureUpdate{"metadata.version", 33, 2}),
		check("unknown-feature", 1, featureUpdate{"no.such", 1, 1}),
		check("unknown-feature-level-0", 1, featureUpdate{"no.such", 0, 2}),
		check("above-range", 1, featureUpdate{"group.version", 2, 1}),
		check("negative-level", 1, featureUpdate{"group.version", -1, 2}),
		check("unknown-upgrade-type", 1, featureUpdate{"group.version", 1, 4}),
		check("upgrade-type-0", 1, featureUpdate{"group.version", 1, 0}),
		check("metadata-version-safe-downgrade", 1, featureUpdate{"metadata.version", 32, 2}),
		check("metadata-version-unsafe-downgrade", 1, featureUpdate{"metadata.version", 20, 3}),
		check("metadata-version-above", 1, featureUpdate{"metadata.version", 34, 1}),
		check("one-bad-of-two", 1, featureUpdate{"group.version", 0, 2}, featureUpdate{"no.such", 1, 1}),
		check("twice", 1, featureUpdate{"group.version", 1, 1}, featureUpdate{"group.version", 1, 1}),
		check("empty", 1),
		check("v2", 2, featureUpdate{"group.version", 1, 1}),
		check("v2-refused", 2, featureUpdate{"group.version", 0, 1}),
		// v0's AllowDowngrade is not read: a downgrade is an upgrade.
		check("v0-downgrade", 0, featureUpdate{"group.version", 0, 2}),
		check("v0-same-level", 0, featureUpdate{"group.version", 1, 2}),
		{"updatefeatures-group-version-round-trip", groupVersionRoundTrip},
	}
}

// groupVersionRoundTrip lowers group.version to 0, asks ApiVersions and
// KIP-848's two APIs, raises it again and asks ApiVersions again.
func groupVersionRoundTrip(s *side) ([]kmsg.Response, error) {
	apiVersions := func() kmsg.Request {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(4)
		req.ClientSoftwareName, req.ClientSoftwareVersion = "protodiff", "1"
		return req
	}
	describe := kmsg.NewPtrConsumerGroupDescribeRequest()
	describe.Groups = []string{s.topic("g848-off"), s.topic("g848-off")}
	reqs := []kmsg.Request{
		updateFeaturesReq(1, false, featureUpdate{"group.version", 0, 2}),
		apiVersions(),
		firstHeartbeatReq(s.topic("g848-off"), "pd-member-0000000000002", s.topic("missing")),
		describe,
		updateFeaturesReq(1, false, featureUpdate{"group.version", 1, 1}),
		apiVersions(),
	}
	var out []kmsg.Response
	for i, req := range reqs {
		resp, err := s.do(req)
		if err != nil {
			return out, err
		}
		if v, ok := resp.(*kmsg.ApiVersionsResponse); ok {
			v.ApiKeys = nil // the apiversions case compares them
		}
		out = append(out, resp)
		if i == 0 || i == 4 {
			// Kafka's broker learns of the change from its metadata log
			// a moment after its controller answers.
			if err := s.waitGroupVersion(apiVersions, int16(i/4)); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// waitGroupVersion asks ApiVersions until it finalizes group.version at
// level (0: not listed), 10 s at most.
func (s *side) waitGroupVersion(apiVersions func() kmsg.Request, level int16) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := s.do(apiVersions())
		if err != nil {
			return err
		}
		got := int16(0)
		for _, f := range resp.(*kmsg.ApiVersionsResponse).FinalizedFeatures {
			if f.Name == "group.version" {
				got = f.MaxVersionLevel
			}
		}
		if got == level {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("group.version still %d on %s after 10 s, want %d", got, s.name, level)
		}
		time.Sleep(100 * time.Millisecond) // a poll of the condition, bounded above
	}
}
