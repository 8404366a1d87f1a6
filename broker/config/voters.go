package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/klogdev/klog/broker/errmsg"
)

// Voter is one entry of controller.quorum.voters: a controller's node id
// and the address its quorum traffic (Raft and forwarded proposals) uses.
type Voter struct {
	ID   int32
	Host string
	Port int32
}

// Addr returns the voter's host:port.
func (v Voter) Addr() string { return net.JoinHostPort(v.Host, strconv.Itoa(int(v.Port))) }

// String returns the voter in the config's form, ID@HOST:PORT.
func (v Voter) String() string { return strconv.Itoa(int(v.ID)) + "@" + v.Addr() }

// ParseVoters parses controller.quorum.voters, a comma-separated list of
// ID@HOST:PORT entries, in the order given. An empty value is no voters
// (the single-node, in-process quorum). Errors carry Kafka's words
// (QuorumConfig.parseVoterConnections).
func ParseVoters(s string) ([]Voter, error) {
	const name = "controller.quorum.voters"
	var out []Voter
	seen := map[int32]bool{}
	for _, entry := range splitList(s) {
		idStr, addr, ok := strings.Cut(entry, "@")
		if !ok || strings.Contains(addr, "@") {
			return nil, errmsg.With(fmt.Errorf("entry %q is not ID@HOST:PORT", entry),
				"Invalid configuration value for "+name+". Each entry should be in the form `{id}@{host}:{port}`.")
		}
		id, err := strconv.ParseInt(strings.TrimSpace(idStr), 10, 32)
		if err != nil {
			return nil, errmsg.Withf(fmt.Errorf("voter id %q of entry %q is not an integer", idStr, entry),
				"Failed to parse voter ID as an integer from %s", idStr)
		}
		if id < 0 {
			return nil, errmsg.Withf(fmt.Errorf("voter id %d of entry %q is negative", id, entry),
				"Invalid negative voter ID %d in %s", id, name)
		}
		host, portStr, err := net.SplitHostPort(addr)
		if err != nil || host == "" {
			return nil, errmsg.Withf(fmt.Errorf("entry %q has no host", entry),
				"Failed to parse host name from entry %s for the configuration %s. Each entry should be in the form `{id}@{host}:{port}`.", entry, name)
		}
		port, err := strconv.ParseUint(portStr, 10, 16)
		if err != nil || port == 0 {
			return nil, errmsg.Withf(fmt.Errorf("entry %q has no valid port", entry),
				"Failed to parse host port from entry %s for the configuration %s. Each entry should be in the form `{id}@{host}:{port}`.", entry, name)
		}
		if host == "0.0.0.0" {
			return nil, errmsg.Withf(fmt.Errorf("entry %q: host %s is not routable", entry, host), "Host string (%s) is not routeable", host)
		}
		if seen[int32(id)] {
			return nil, errmsg.Withf(fmt.Errorf("voter id %d appears twice", id), "Duplicate voter id %d in %s", id, name)
		}
		seen[int32(id)] = true
		out = append(out, Voter{ID: int32(id), Host: host, Port: int32(port)})
	}
	return out, nil
}

func validateVoters(v string) error {
	_, err := ParseVoters(v)
	return err
}

// checkQuorum checks node.id against controller.quorum.voters: a quorum
// needs this node's id. A node among the voters is a controller and
// broker; any other is a broker only (Kafka's process.roles=broker),
// which learns the metadata from the voters.
func checkQuorum(nodeID int32, voters []Voter) error {
	if len(voters) == 0 {
		return nil
	}
	if nodeID < 0 {
		return errmsg.With(errors.New("node.id must be set when controller.quorum.voters is"),
			"Missing required configuration \"node.id\" which has no default value.")
	}
	return nil
}
