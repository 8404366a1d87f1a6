package broker

// CreatePartitions (key 37), versions 0-3.
//
// Raises a topic's partition count to the requested total (never lowers
// it: INVALID_PARTITIONS). Manual assignments for the new partitions are not
// supported yet: klog places them itself. ValidateOnly checks without
// creating.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleCreatePartitions(n *Node, ctx context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	ctx, cancel := requestContext(ctx, req.TimeoutMillis)
	defer cancel()

	seen := make(map[string]int, len(req.Topics))
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	changed := false
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		var err error
		switch {
		case seen[rt.Topic] > 1:
			err = kerr.InvalidRequest
		case len(rt.Assignment) > 0:
			err = kerr.InvalidReplicaAssignment
		default:
			err = n.ctrl.CreatePartitions(ctx, rt.Topic, rt.Count, req.ValidateOnly)
		}
		if err != nil {
			st.ErrorCode = errorCode(err)
			st.ErrorMessage = errorMessage(err)
		} else if !req.ValidateOnly {
			changed = true
		}
		resp.Topics = append(resp.Topics, st)
	}
	if changed {
		n.reconcile()
	}
	return resp, nil
}
