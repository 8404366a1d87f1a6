package broker

// ApiVersions (key 18), versions 0-5.
//
// The response lists every API in the registration table (apis.go) with
// the version range klog serves. A request at a version klog does not
// serve is answered in version 0 with UNSUPPORTED_VERSION and the same
// list, so that the client can retry at a version both sides know.
//
// v3+ advertises the feature flags klog knows (KIP-584, broker/metadata's
// table): the levels each supports, and those finalized above level 0 in
// the metadata image (UpdateFeatures changes them), as Kafka lists them.
// The epoch of the finalized levels is the image's index, as Kafka's is
// the offset of its metadata image: it grows with every metadata change,
// so a client that cached the levels sees they may have changed. As
// Kafka's ApiVersionsResponse (KAFKA-17492), v3 leaves out the supported
// features whose minimum level is 0, which older clients cannot decode;
// v4 lists them all.
//
// v5 (KIP-1242) lets the client name the cluster and node it believes it
// reached: both or neither (INVALID_REQUEST), and REBOOTSTRAP_REQUIRED,
// with no API keys, when either is not this node's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
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
		img := n.ctrl.Image()
		for _, f := range metadata.Features() {
			if f.Min > 0 || req.Version >= 4 {
				sf := kmsg.NewApiVersionsResponseSupportedFeature()
				sf.Name, sf.MinVersion, sf.MaxVersion = f.Name, f.Min, f.Max
				resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
			}
		}
		for _, l := range img.FinalizedFeatures() {
			ff := kmsg.NewApiVersionsResponseFinalizedFeature()
			ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = l.Name, l.Level, l.Level
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		}
		resp.FinalizedFeaturesEpoch = int64(img.Index)
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
