package broker

// ApiVersions (key 18), versions 0-5.
//
// The response lists every API in the registration table (apis.go) with
// the version range klog serves. A request at a version klog does not
// serve is answered in version 0 with UNSUPPORTED_VERSION and the same
// list, so that the client can retry at a version both sides know.
//
// v3+ advertises the feature flags of featureTable (KIP-584): supported
// levels, finalized levels and their epoch. As Kafka's ApiVersionsResponse
// (KAFKA-17492), v3 leaves out the supported features whose minimum level
// is 0, which older clients cannot decode; v4 lists them all.
//
// v5 (KIP-1242) lets the client name the cluster and node it believes it
// reached: both or neither (INVALID_REQUEST), and REBOOTSTRAP_REQUIRED,
// with no API keys, when either is not this node's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleApiVersions(n *Node, _ context.Context, _ *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 && (!wire.ValidClientSoftware(req.ClientSoftwareName) || !wire.ValidClientSoftware(req.ClientSoftwareVersion)) {
		// As Kafka's ApiVersionsRequest.isValid: the error alone, no keys.
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	if req.Version >= 5 && (req.ClusterID == nil) != (req.NodeID == -1) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	if req.Version >= 5 && req.ClusterID != nil && (*req.ClusterID != n.ctrl.Image().ClusterID || req.NodeID != n.cfg.NodeID) {
		resp.ErrorCode = kerr.RebootstrapRequired.Code
		return resp, nil
	}
	resp.ApiKeys = apiKeys()
	if req.Version >= 3 {
		for _, f := range featureTable() {
			if f.min > 0 || req.Version >= 4 {
				sf := kmsg.NewApiVersionsResponseSupportedFeature()
				sf.Name, sf.MinVersion, sf.MaxVersion = f.name, f.min, f.max
				resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
			}
			ff := kmsg.NewApiVersionsResponseFinalizedFeature()
			ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = f.name, f.finalized, f.finalized
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		}
		resp.FinalizedFeaturesEpoch = featuresEpoch
	}
	return resp, nil
}

func (n *Node) apiVersionsUnsupported() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = apiKeys()
	return resp
}

func apiKeys() []kmsg.ApiVersionsResponseApiKey {
	versions := APIVersions()
	keys := make([]kmsg.ApiVersionsResponseApiKey, 0, len(versions))
	for _, v := range versions {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = v.Key, v.Min, v.Max
		keys = append(keys, k)
	}
	return keys
}
