package controller

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// RaftState is this node's own view of the metadata quorum, for
// inspection (the admin API): its Raft role and term, the indexes it has
// reached, and the Raft configuration it knows. Unlike DescribeQuorum it
// asks no other node.
type RaftState struct {
	// Role is "leader", "follower", "candidate", "observer" (a broker-only
	// node, a Raft non-voter) or "shutdown".
	Role string
	Term uint64
	// Leader is the Raft leader this node knows of; -1 when none.
	Leader int32
	// CommitIndex is the last log index this node knows committed,
	// AppliedIndex the last its state machine applied, LastLogIndex the
	// last in its log, and MetadataIndex the index of the metadata image
	// it serves from (the last record applied).
	CommitIndex   uint64
	AppliedIndex  uint64
	LastLogIndex  uint64
	MetadataIndex uint64
	// LastContact is when a follower last heard from the leader; zero on
	// the leader, and before any contact.
	LastContact time.Time
	// Voters and Observers are the Raft configuration's members, by ID.
	Voters    []QuorumMember
	Observers []QuorumMember
}

// QuorumMember is a member of the Raft configuration: its node ID and its
// quorum address (an in-memory one for the single-node quorum).
type QuorumMember struct {
	ID   int32
	Addr string
}

// RaftState returns this node's view of the quorum. It reads Raft's
// counters and its latest configuration, neither of which waits for Raft.
func (c *Controller) RaftState() RaftState {
	st := c.raft.State()
	rs := RaftState{
		Role:          roleName(st, c.observer),
		Term:          c.raft.CurrentTerm(),
		CommitIndex:   c.raft.CommitIndex(),
		AppliedIndex:  c.raft.AppliedIndex(),
		LastLogIndex:  c.raft.LastIndex(),
		MetadataIndex: c.Image().Index,
	}
	rs.Leader, _ = c.Leader()
	if st != raft.Leader {
		rs.LastContact = c.raft.LastContact()
	}
	if f := c.raft.GetConfiguration(); f.Error() == nil {
		rs.Voters, rs.Observers = members(f.Configuration())
	}
	return rs
}

func roleName(st raft.RaftState, observer bool) string {
	switch {
	case st == raft.Shutdown:
		return "shutdown"
	case observer:
		return "observer"
	case st == raft.Leader:
		return "leader"
	case st == raft.Candidate:
		return "candidate"
	default:
		return "follower"
	}
}

// members splits cfg's servers into voters and the others (observers),
// each ordered by node ID, skipping a server whose ID is not a node ID.
func members(cfg raft.Configuration) (voters, observers []QuorumMember) {
	voters, observers = []QuorumMember{}, []QuorumMember{}
	for _, s := range cfg.Servers {
		id, err := strconv.ParseInt(string(s.ID), 10, 32)
		if err != nil {
			continue
		}
		m := QuorumMember{ID: int32(id), Addr: string(s.Address)}
		if s.Suffrage == raft.Voter {
			voters = append(voters, m)
		} else {
			observers = append(observers, m)
		}
	}
	byID := func(a, b QuorumMember) int { return cmp.Compare(a.ID, b.ID) }
	slices.SortFunc(voters, byID)
	slices.SortFunc(observers, byID)
	return voters, observers
}
