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

func handleApiVersions(n *Node, _ context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 && (!validSoftwareField(req.ClientSoftwareName) || !validSoftwareField(req.ClientSoftwareVersion)) {
		// As Kafka's ApiVersionsRequest.isValid: the error alone, no keys.
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	resp.ApiKeys = apiKeys()
	return resp, nil
}

// validSoftwareField reports whether s may be a client software name or
// version (KIP-511): letters, digits, '-' and '.', beginning and ending
// with a letter or digit.
func validSoftwareField(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !alnum(c) && ((c != '-' && c != '.') || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
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
