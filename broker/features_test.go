package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// Feature levels finalized with UpdateFeatures (key 57), kept in the
// metadata log, and the behaviour they gate.

// updateFeature sends one UpdateFeatures of name to level at version 1
// to addr.
func updateFeature(t *testing.T, addr string, name string, level int16, upgradeType int8, validateOnly bool) *kmsg.UpdateFeaturesResponse {
	t.Helper()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.SetVersion(1)
	req.ValidateOnly = validateOnly
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, upgradeType
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	resp, err := dialRaw(t, addr).do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.UpdateFeaturesResponse)
}

// TestUpdateFeaturesGroupVersion lowers group.version to 0 and raises it
// again: each step is refused or taken as Kafka 4.4 does it, ApiVersions
// finalizes the new level with a greater epoch, KIP-848's two APIs answer
// UNSUPPORTED_VERSION while the level is 0, and the level survives a
// restart from the Raft log and from a snapshot.
func TestUpdateFeaturesGroupVersion(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	resp := updateFeature(t, n.Addr(), "group.version", 0, 1, false)
	want := "The update failed for all features since the following feature had an error: Invalid update version 0 for feature group.version. " +
		"Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."
	if resp.ErrorCode != kerr.InvalidUpdateVersion.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != want || len(resp.Results) != 0 {
		t.Fatalf("downgrade as an upgrade: %d %v %v, want INVALID_UPDATE_VERSION %q", resp.ErrorCode, resp.ErrorMessage, resp.Results, want)
	}
	before := askApiVersions(t, dialRaw(t, n.Addr()), 4)
	if resp = updateFeature(t, n.Addr(), "group.version", 0, 2, true); resp.ErrorCode != 0 || len(resp.Results) != 1 || *resp.Results[0].ErrorMessage != "NONE" {
		t.Fatalf("validate-only safe downgrade: %+v", resp)
	}
	if got := finalizedOf(askApiVersions(t, dialRaw(t, n.Addr()), 4))["group.version"]; got != [2]int16{1, 1} {
		t.Fatalf("group.version %v after a validate-only downgrade, want 1", got)
	}
	if resp = updateFeature(t, n.Addr(), "group.version", 0, 2, false); resp.ErrorCode != 0 {
		t.Fatalf("safe downgrade: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	off := func(when string) {
		t.Helper()
		v := askApiVersions(t, dialRaw(t, n.Addr()), 4)
		if _, ok := finalizedOf(v)["group.version"]; ok || v.FinalizedFeaturesEpoch <= before.FinalizedFeaturesEpoch {
			t.Fatalf("%s: finalized %v epoch %d (before %d), want no group.version and a greater epoch", when, finalizedOf(v), v.FinalizedFeaturesEpoch, before.FinalizedFeaturesEpoch)
		}
		hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis = "g", "member-of-the-test-0001", 30000
		hb.SubscribedTopicNames, hb.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		hresp, err := hb.RequestWith(ctx, cl)
		if err != nil || hresp.ErrorCode != kerr.UnsupportedVersion.Code || hresp.ErrorMessage != nil {
			t.Fatalf("%s: heartbeat %+v, %v; want UNSUPPORTED_VERSION without a message", when, hresp, err)
		}
		d := kmsg.NewPtrConsumerGroupDescribeRequest()
		d.Groups = []string{"g"}
		dresp, err := d.RequestWith(ctx, cl)
		if err != nil || len(dresp.Groups) != 1 || dresp.Groups[0].ErrorCode != kerr.UnsupportedVersion.Code {
			t.Fatalf("%s: describe %+v, %v; want UNSUPPORTED_VERSION", when, dresp, err)
		}
	}
	off("after the downgrade")
	n.Restart()
	cl = n.Client()
	off("after a restart from the Raft log")
	if err := n.Broker().SnapshotMetadataForTest(); err != nil {
		t.Fatal(err)
	}
	n.Restart()
	cl = n.Client()
	off("after a restart from a snapshot")

	if resp = updateFeature(t, n.Addr(), "group.version", 1, 2, false); resp.ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Fatalf("upgrade as a downgrade: %+v", resp)
	}
	if resp = updateFeature(t, n.Addr(), "group.version", 1, 1, false); resp.ErrorCode != 0 {
		t.Fatalf("upgrade: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis = "g", "member-of-the-test-0001", 30000
	hb.SubscribedTopicNames, hb.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if hresp, err := hb.RequestWith(ctx, cl); err != nil || hresp.ErrorCode != 0 {
		t.Fatalf("heartbeat after the upgrade: %+v, %v", hresp, err)
	}
}

// TestUpdateFeaturesRefusals: what klog cannot honour is refused with
// INVALID_UPDATE_VERSION and nothing changes; what Kafka 4.4 refuses is
// refused with its message.
func TestUpdateFeaturesRefusals(t *testing.T) {
	n := brokertest.Start(t)
	const prefix = "The update failed for all features since the following feature had an error: "
	for _, tc := range []struct {
		name  string
		level int16
		typ   int8
		msg   string
	}{
		{"transaction.version", 1, 2, "Invalid update version 1 for feature transaction.version. klog's transaction coordinator runs transaction version 2 only (an abort it forces bumps the epoch), so the level stays 2."},
		{"share.version", 2, 1, "Invalid update version 2 for feature share.version. Local controller 0 only supports versions 0-1"},
		{"kraft.version", 1, 1, "Invalid update version 1 for feature kraft.version. Local controller 0 does not support this feature."},
		{"metadata.version", 32, 2, "Unsupported metadata.version downgrade from 33 to 32. Refusing to perform the requested downgrade because it might delete metadata information."},
		{"metadata.version", 34, 1, "Invalid update version 34 for feature metadata.version. Local controller 0 only supports versions 7-33"},
		{"group.version", 2, 1, "Invalid update version 2 for feature group.version. Local controller 0 only supports versions 0-1"},
		{"group.version", -1, 2, "Invalid update version -1 for feature group.version. A feature version cannot be less than 0."},
		{"group.version", 1, 4, "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."},
		{"no.such", 1, 1, "Invalid update version 1 for feature no.such. Local controller 0 does not support this feature."},
		{"no.such", 0, 2, "Invalid update version 0 for feature no.such. Feature no.such not found."},
	} {
		resp := updateFeature(t, n.Addr(), tc.name, tc.level, tc.typ, false)
		if resp.ErrorCode != kerr.InvalidUpdateVersion.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != prefix+tc.msg {
			t.Errorf("%s to %d (type %d): %d %v, want INVALID_UPDATE_VERSION %q", tc.name, tc.level, tc.typ, resp.ErrorCode, resp.ErrorMessage, tc.msg)
		}
	}
	if got, want := finalizedOf(askApiVersions(t, dialRaw(t, n.Addr()), 4)), map[string][2]int16{"group.version": {1, 1}, "transaction.version": {2, 2}, "metadata.version": {33, 33}, "share.version": {1, 1}}; !equalMaps(got, want) {
		t.Errorf("finalized after the refusals %v, want %v", got, want)
	}
}

// TestUpdateFeaturesReachEveryNode lowers group.version through a node
// that is not the active controller (it forwards) and sees every node
// finalize the new level.
func TestUpdateFeaturesReachEveryNode(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	last := c.Nodes()[len(c.Nodes())-1]
	if resp := updateFeature(t, last.Addr(), "group.version", 0, 2, false); resp.ErrorCode != 0 {
		t.Fatalf("downgrade through node %d: %v %v", last.ID(), kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	for _, n := range c.Nodes() {
		r := dialRaw(t, n.Addr())
		testkit.WaitFor(t, "node's group.version at 0", func() (bool, string) {
			f := finalizedOf(askApiVersions(t, r, 4))
			_, on := f["group.version"]
			return !on, "still finalized"
		})
	}
}

// TestUpdateFeaturesShareVersion: share.version 0 turns share groups off,
// their APIs answering UNSUPPORTED_VERSION, and 1 on again.
func TestUpdateFeaturesShareVersion(t *testing.T) {
	n := brokertest.Start(t)
	heartbeat := func() int16 {
		t.Helper()
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.SetVersion(1)
		req.GroupID, req.MemberID, req.MemberEpoch = "sv", "m-1234567890123456789012", 0
		req.SubscribedTopicNames = []string{"sv"}
		resp, err := dialRaw(t, n.Addr()).do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.ShareGroupHeartbeatResponse).ErrorCode
	}
	if code := heartbeat(); code == kerr.UnsupportedVersion.Code {
		t.Fatalf("share groups off at share.version 1")
	}
	if resp := updateFeature(t, n.Addr(), "share.version", 0, 2, false); resp.ErrorCode != 0 {
		t.Fatalf("downgrade share.version to 0: %d %v", resp.ErrorCode, resp.ErrorMessage)
	}
	if code := heartbeat(); code != kerr.UnsupportedVersion.Code {
		t.Errorf("heartbeat at share.version 0: %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(code))
	}
	if resp := updateFeature(t, n.Addr(), "share.version", 1, 1, false); resp.ErrorCode != 0 {
		t.Fatalf("upgrade share.version to 1: %d %v", resp.ErrorCode, resp.ErrorMessage)
	}
	if code := heartbeat(); code == kerr.UnsupportedVersion.Code {
		t.Errorf("share groups still off after share.version went back to 1")
	}
}
