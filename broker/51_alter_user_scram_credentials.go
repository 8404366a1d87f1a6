package broker

// AlterUserScramCredentials (key 51), version 0.
//
// Deletions and upsertions of users' SCRAM credentials, forwarded to the
// active controller and checked as Kafka's ScramControlManager does (see
// controller.AlterSCRAMCredentials): one result per user, a user altered
// twice is DUPLICATE_RESOURCE, an empty name or an iteration count
// outside [4096, 16384] UNACCEPTABLE_CREDENTIAL, a mechanism other than
// SCRAM-SHA-256 (1) and SCRAM-SHA-512 (2) UNSUPPORTED_SASL_MECHANISM,
// the deletion of a credential that does not exist RESOURCE_NOT_FOUND.
// An upsertion carries the salt and the salted password, never the
// password; the metadata keeps the salt and the keys derived from it.
// klog also refuses an empty salt or salted password
// (UNACCEPTABLE_CREDENTIAL), which Kafka fails on with an unknown error.
// The principal needs ALTER on the cluster: every user is answered
// CLUSTER_AUTHORIZATION_FAILED otherwise.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/wire"
)

func handleAlterUserSCRAMCredentials(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	dels := make([]controller.SCRAMDeletion, 0, len(req.Deletions))
	for _, d := range req.Deletions {
		dels = append(dels, controller.SCRAMDeletion{User: d.Name, Mechanism: scramMechanismName(d.Mechanism)})
	}
	ups := make([]controller.SCRAMUpsertion, 0, len(req.Upsertions))
	for _, u := range req.Upsertions {
		ups = append(ups, controller.SCRAMUpsertion{User: u.Name, Mechanism: scramMechanismName(u.Mechanism),
			Iterations: u.Iterations, Salt: u.Salt, SaltedPassword: u.SaltedPassword})
	}
	var results []controller.UserResult
	err := error(kerr.ClusterAuthorizationFailed)
	if n.authorizeCluster(rc, kmsg.ACLOperationAlter) {
		results, err = n.ctrl.AlterSCRAMCredentials(ctx, dels, ups)
	}
	if err != nil {
		// The request failed as a whole: every user named is told so.
		seen := map[string]bool{}
		for _, d := range dels {
			if !seen[d.User] {
				seen[d.User] = true
				results = append(results, controller.UserResult{User: d.User, Err: err})
			}
		}
		for _, u := range ups {
			if !seen[u.User] {
				seen[u.User] = true
				results = append(results, controller.UserResult{User: u.User, Err: err})
			}
		}
	}
	for _, r := range results {
		rr := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		rr.User, rr.ErrorCode, rr.ErrorMessage = r.User, errorCode(r.Err), errorMessage(r.Err)
		resp.Results = append(resp.Results, rr)
	}
	return resp, nil
}

// scramMechanismName is the name of a SCRAM mechanism's Kafka type
// number, "" for UNKNOWN.
func scramMechanismName(typ int8) string {
	if typ < 1 || int(typ) > len(auth.SCRAMMechanisms) {
		return ""
	}
	return auth.SCRAMMechanisms[typ-1]
}
