package broker

// ApiVersions (key 18), versions 0-4.
//
// The response lists every API in the registration table (apis.go) with
// the version range klog serves. A request at a version klog does not
// serve is answered in version 0 with UNSUPPORTED_VERSION and the same
// list, so that the client can retry at a version both sides know.
//
// Not implemented: supported and finalized features (KIP-584) are not
// advertised; klog has no feature flags yet.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleApiVersions(n *Node, _ context.Context, _ *clientConn, req kmsg.Request) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	resp.ApiKeys = apiKeys()
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
