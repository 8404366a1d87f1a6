package nodeapi

import (
	"context"
	"net/http"
)

// PathGroup is GET /v1/groups/{group}: the group as its coordinator
// holds it, each member with the principal its client authenticated as
// (Group), which no Kafka API describes; 404 from a node that does not
// coordinate the group.
const PathGroup = "/v1/groups/{group}"

// GroupPath is the path of group.
func GroupPath(group string) string { return "/v1/groups/" + escapePath(group) }

// Group is GET /v1/groups/{group}.
type Group struct {
	NodeID int32  `json:"node_id"`
	Group  string `json:"group"`
	// Type is classic or consumer; State Kafka's name of its state.
	Type       string        `json:"type"`
	State      string        `json:"state"`
	Generation int32         `json:"generation"`
	Members    []GroupMember `json:"members"`
}

// GroupMember is one member of a Group.
type GroupMember struct {
	MemberID   string `json:"member_id"`
	InstanceID string `json:"instance_id,omitempty"`
	ClientID   string `json:"client_id"`
	ClientHost string `json:"client_host"`
	// Principal is who the member's client authenticated as when it
	// joined or last heartbeat ("User:alice"); empty when the
	// coordinator has not seen it since it loaded the group (a restart,
	// a move of the coordinator).
	Principal string `json:"principal,omitempty"`
}

// Group is GET /v1/groups/{group}.
func (c *Client) Group(ctx context.Context, group string) (Group, error) {
	var out Group
	return out, c.call(ctx, http.MethodGet, GroupPath(group), nil, &out)
}
