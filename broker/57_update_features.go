package broker

// UpdateFeatures (key 57), versions 0-2.
//
// Finalizes new levels of feature flags (KIP-584) in the metadata log,
// where ApiVersions reads them, checked as Kafka 4.4's controller checks
// them (controller.UpdateFeatures): an unknown feature, a level outside
// the range klog supports, a downgrade without a downgrade upgrade type,
// an upgrade with one, an unknown upgrade type or a negative level fail
// the whole request with INVALID_UPDATE_VERSION and Kafka's message
// after "The update failed for all features since the following feature
// had an error: ". Kafka 4.4 reads no AllowDowngrade from a v0 request:
// its controller takes the upgrade type's default, an upgrade, so a v0
// downgrade is refused whatever it says, and klog answers it the same.
// What klog cannot honour is refused the same way: levels above 0 of
// share.version, streams.version, eligible.leader.replicas.version and
// kraft.version (klog supports 0 only), and lowering transaction.version
// or metadata.version (docs/compatibility.md says why for each).
// ValidateOnly (v1+) checks without finalizing. v0-1 answer each feature
// of a request that succeeded, with the message "NONE" as Kafka sends it;
// v2 answers with the top-level error alone. The principal needs ALTER on
// the cluster (CLUSTER_AUTHORIZATION_FAILED).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/wire"
)

func handleUpdateFeatures(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.UpdateFeaturesRequest)
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	if !n.authorizeCluster(rc, kmsg.ACLOperationAlter) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, errorMessage(kerr.ClusterAuthorizationFailed)
		return resp, nil
	}
	ctx, cancel := requestContext(ctx, req.TimeoutMillis)
	defer cancel()
	updates := make([]controller.FeatureUpdate, 0, len(req.FeatureUpdates))
	for _, u := range req.FeatureUpdates {
		typ := controller.Upgrade
		if req.Version >= 1 {
			typ = controller.UpgradeType(u.UpgradeType)
		}
		updates = append(updates, controller.FeatureUpdate{Name: u.Feature, Level: u.MaxVersionLevel, Type: typ})
	}
	if err := n.ctrl.UpdateFeatures(ctx, updates, req.ValidateOnly); err != nil {
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), errorMessage(err)
		if msg, ok := errmsg.Wire(err); ok && resp.ErrorCode == kerr.InvalidUpdateVersion.Code {
			resp.ErrorMessage = kmsg.StringPtr("The update failed for all features since the following feature had an error: " + msg)
		}
		return resp, nil
	}
	if !req.ValidateOnly {
		n.settle(ctx)
	}
	if req.Version <= 1 {
		for _, u := range req.FeatureUpdates {
			r := kmsg.NewUpdateFeaturesResponseResult()
			r.Feature, r.ErrorMessage = u.Feature, kmsg.StringPtr("NONE")
			resp.Results = append(resp.Results, r)
		}
	}
	return resp, nil
}
