package broker

// DescribeUserScramCredentials (key 50), version 0.
//
// The users' SCRAM mechanisms and iteration counts from this node's
// metadata image, as Kafka's ScramImage.describe: no users (null or
// empty) lists every user with a credential, sorted by name; a named user
// without one is RESOURCE_NOT_FOUND, a user named twice
// DUPLICATE_RESOURCE (answered once), both with Kafka's messages. Salts
// and keys are never answered.
//
// The principal needs DESCRIBE on the cluster
// (CLUSTER_AUTHORIZATION_FAILED for the whole request otherwise).

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/wire"
)

func handleDescribeUserSCRAMCredentials(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !n.authorizeCluster(rc, kmsg.ACLOperationDescribe) {
		// DESCRIBE on the cluster, as Kafka asks.
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, errorMessage(kerr.ClusterAuthorizationFailed)
		return resp, nil
	}
	img := n.ctrl.Image()
	var users []string
	count := map[string]int{}
	if len(req.Users) == 0 {
		users = slices.Sorted(func(yield func(string) bool) {
			for u := range img.SCRAMCredentials {
				if !yield(u) {
					return
				}
			}
		})
	}
	for _, u := range req.Users {
		if count[u.Name]++; count[u.Name] == 1 {
			users = append(users, u.Name)
		}
	}
	for _, user := range users {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = user
		switch {
		case count[user] > 1:
			r.ErrorCode = kerr.DuplicateResource.Code
			r.ErrorMessage = new("Cannot describe SCRAM credentials for the same user twice in a single request: " + user)
		case len(img.SCRAMCredentials[user]) == 0:
			r.ErrorCode = kerr.ResourceNotFound.Code
			r.ErrorMessage = new("Attempt to describe a user credential that does not exist: " + user)
		default:
			for i, mech := range auth.SCRAMMechanisms {
				if c, ok := img.SCRAMCredential(user, mech); ok {
					info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
					info.Mechanism, info.Iterations = int8(i+1), c.Iterations
					r.CredentialInfos = append(r.CredentialInfos, info)
				}
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
