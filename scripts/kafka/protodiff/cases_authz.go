package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/scripts/internal/kwire"
)

// The authorization corpus (-authz): each API whose answer depends on an
// ACL, sent as User:alice on the brokers' SASL listener (authz.properties:
// the StandardAuthorizer, no ACL meaning no access), with alice
//
//   - allowed the operation on the resource that decides it, by a literal
//     or a prefixed ACL;
//   - denied it by a literal or prefixed DENY beside an ALLOW of every
//     resource of the type (a deny beats an allow);
//   - given nothing on it.
//
// Whatever else the request needs to reach that decision is allowed
// literally. A case first removes every ACL of alice and waits until the
// broker no longer lists one, creates its own and waits until the broker
// lists them: the broker's authorizer answers DescribeAcls from the ACLs
// it decides with. Setup and ACLs go as ANONYMOUS on PLAINTEXT, a super
// user. The cluster resource takes literal ACLs only.

// alice is the principal the corpus authorizes, and her PLAIN password.
const (
	alicePrincipal     = "User:alice"
	aliceUser          = "alice"
	alicePass          = "alice-secret"
	clusterResource    = "kafka-cluster"
	aclPropagation     = 15 * time.Second
	authzDefaultAction = "none"
)

// errSetupf is a setup error of side s.
func errSetupf(s *side, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", errSetup, s.name, fmt.Sprintf(format, args...))
}

// authzAPI is one API of the corpus and the ACL that decides it.
type authzAPI struct {
	name string
	rt   kmsg.ACLResourceType
	op   kmsg.ACLOperation
	// also are the other ACLs the request needs, literal on the case's
	// names.
	also []aclGrant
	// setup builds what the request needs, as a super user.
	setup func(s *side, name string) error
	req   func(name string) kmsg.Request
}

// aclGrant is one operation on one resource type.
type aclGrant struct {
	rt kmsg.ACLResourceType
	op kmsg.ACLOperation
}

// authzCases is the corpus: every API in every mode.
func authzCases() []testCase {
	var out []testCase
	for _, api := range authzAPIs() {
		modes := []string{"allow-literal", "allow-prefixed", "deny-literal", "deny-prefixed", authzDefaultAction}
		if api.rt == kmsg.ACLResourceTypeCluster {
			modes = []string{"allow-literal", "deny-literal", authzDefaultAction}
		}
		for _, mode := range modes {
			out = append(out, testCase{name: "authz-" + api.name + "-" + mode, run: api.caseRun(mode)})
		}
	}
	return out
}

// caseRun is api's case in mode.
func (api authzAPI) caseRun(mode string) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		// The prefix holds the run's suffix: a prefixed ACL matches no
		// resource of an earlier run on the same broker.
		prefix := s.topic("az-" + api.name + "-" + mode)
		name := prefix + "-r"
		if api.setup != nil {
			if err := api.setup(s, name); err != nil {
				return nil, err
			}
		}
		if err := s.setACLs(api.acls(mode, name, prefix)); err != nil {
			return nil, err
		}
		resp, err := s.doAsAlice(api.req(name))
		if err != nil {
			return nil, err
		}
		return []kmsg.Response{resp}, nil
	}
}

// acls are the ACLs of alice for mode on the resource named name, which
// starts with prefix.
func (api authzAPI) acls(mode, name, prefix string) []kmsg.CreateACLsRequestCreation {
	resource := func(rt kmsg.ACLResourceType) string {
		if rt == kmsg.ACLResourceTypeCluster {
			return clusterResource
		}
		return name
	}
	var out []kmsg.CreateACLsRequestCreation
	for _, g := range api.also {
		out = append(out, aliceACL(g.rt, resource(g.rt), kmsg.ACLResourcePatternTypeLiteral, g.op, kmsg.ACLPermissionTypeAllow))
	}
	pattern, target := kmsg.ACLResourcePatternTypeLiteral, resource(api.rt)
	if mode == "allow-prefixed" || mode == "deny-prefixed" {
		pattern, target = kmsg.ACLResourcePatternTypePrefixed, prefix
	}
	switch mode {
	case "allow-literal", "allow-prefixed":
		out = append(out, aliceACL(api.rt, target, pattern, api.op, kmsg.ACLPermissionTypeAllow))
	case "deny-literal", "deny-prefixed":
		all := "*"
		if api.rt == kmsg.ACLResourceTypeCluster {
			all = clusterResource
		}
		out = append(out, aliceACL(api.rt, all, kmsg.ACLResourcePatternTypeLiteral, api.op, kmsg.ACLPermissionTypeAllow),
			aliceACL(api.rt, target, pattern, api.op, kmsg.ACLPermissionTypeDeny))
	}
	return out
}

// aliceACL is one ACL of alice from any host.
func aliceACL(rt kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pattern
	c.Principal, c.Host, c.Operation, c.PermissionType = alicePrincipal, "*", op, perm
	return c
}

// setACLs removes every ACL of alice, creates acls, and waits until the
// broker lists exactly them.
func (s *side) setACLs(acls []kmsg.CreateACLsRequestCreation) error {
	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	f.Principal, f.Operation, f.PermissionType = kmsg.StringPtr(alicePrincipal), kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	if resp, err := s.do(del); err != nil {
		return fmt.Errorf("%w: DeleteAcls on %s: %v", errSetup, s.name, err)
	} else if r := resp.(*kmsg.DeleteACLsResponse).Results; len(r) != 1 || r[0].ErrorCode != 0 {
		return fmt.Errorf("%w: DeleteAcls on %s: %+v", errSetup, s.name, r)
	}
	if len(acls) > 0 {
		create := kmsg.NewPtrCreateACLsRequest()
		create.Creations = acls
		resp, err := s.do(create)
		if err != nil {
			return fmt.Errorf("%w: CreateAcls on %s: %v", errSetup, s.name, err)
		}
		for _, r := range resp.(*kmsg.CreateACLsResponse).Results {
			if r.ErrorCode != 0 {
				return fmt.Errorf("%w: CreateAcls on %s: %v", errSetup, s.name, kerr.ErrorForCode(r.ErrorCode))
			}
		}
	}
	return s.waitAliceACLs(len(acls))
}

// waitAliceACLs waits until the broker lists want ACLs of alice.
func (s *side) waitAliceACLs(want int) error {
	deadline := time.Now().Add(aclPropagation)
	for {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		req.Principal, req.Operation, req.PermissionType = kmsg.StringPtr(alicePrincipal), kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		resp, err := s.do(req)
		if err != nil {
			return fmt.Errorf("%w: DescribeAcls on %s: %v", errSetup, s.name, err)
		}
		got := 0
		for _, r := range resp.(*kmsg.DescribeACLsResponse).Resources {
			got += len(r.ACLs)
		}
		if got == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s lists %d ACLs of alice after %s, want %d", errSetup, s.name, got, aclPropagation, want)
		}
		time.Sleep(50 * time.Millisecond) // a poll of the condition, bounded above
	}
}

// warmTransactions initializes a transactional id as a super user until
// the broker answers without error, 60 s at most: the first one waits
// for __transaction_state to load, which the corpus must not see.
func (s *side) warmTransactions() error {
	deadline := time.Now().Add(60 * time.Second)
	id := s.topic("az-warm")
	for {
		resp, err := s.do(initProducerIDReq(&id))
		if err == nil {
			err = kerr.ErrorForCode(resp.(*kmsg.InitProducerIDResponse).ErrorCode)
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("InitProducerId on %s: %w", s.name, err)
		}
		time.Sleep(100 * time.Millisecond) // a poll of the condition, bounded above
	}
}

// doAsAlice sends req as alice on the side's SASL listener, logging in
// with PLAIN on a new connection when there is none.
func (s *side) doAsAlice(req kmsg.Request) (kmsg.Response, error) {
	if s.alice == nil {
		c, err := saslDial(s.saslAddr, s.versions, aliceUser, alicePass)
		if err != nil {
			return nil, fmt.Errorf("%w: logging in as alice on %s: %v", errSetup, s.name, err)
		}
		s.alice = c
	}
	resp, _, err := s.alice.Do(req, 15*time.Second)
	s.sent = append(s.sent, fmt.Sprintf("%s v%d", kmsg.NameForKey(req.Key()), req.GetVersion()))
	if err != nil {
		_ = s.alice.Close()
		s.alice = nil
		return nil, err
	}
	return resp, nil
}

// saslDial connects to addr and logs in with PLAIN (SaslHandshake v1,
// SaslAuthenticate v2).
func saslDial(addr string, versions map[int16]int16, user, pass string) (*kwire.Conn, error) {
	c, err := kwire.Dial(addr, "protodiff", versions)
	if err != nil {
		return nil, err
	}
	resp, _, err := c.Do(kwire.SASLHandshake("PLAIN"), 15*time.Second)
	if err == nil {
		err = kerr.ErrorForCode(resp.(*kmsg.SASLHandshakeResponse).ErrorCode)
	}
	if err == nil {
		if resp, _, err = c.Do(kwire.SASLAuthenticate([]byte("\x00"+user+"\x00"+pass)), 15*time.Second); err == nil {
			err = kerr.ErrorForCode(resp.(*kmsg.SASLAuthenticateResponse).ErrorCode)
		}
	}
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// saslCases are the SASL listener's answers to logins and to requests
// out of turn, each on a connection of its own.
func saslCases() []testCase {
	handshake := func(mechanism string) kmsg.Request { return kwire.SASLHandshake(mechanism) }
	authenticate := func(token string) kmsg.Request { return kwire.SASLAuthenticate([]byte(token)) }
	metadata := func() kmsg.Request {
		req := metadataReq()
		req.Version = 12
		return req
	}
	return []testCase{
		{"sasl-handshake-unknown-mechanism", onSASL(handshake("GSSAPI"))},
		{"sasl-handshake-v0-plain", onSASL(func() kmsg.Request {
			req := kmsg.NewPtrSASLHandshakeRequest()
			req.Mechanism = "PLAIN"
			return req
		}())},
		{"sasl-plain-wrong-password", onSASL(handshake("PLAIN"), authenticate("\x00alice\x00wrong"))},
		{"sasl-plain-unknown-user", onSASL(handshake("PLAIN"), authenticate("\x00mallory\x00alice-secret"))},
		{"sasl-plain-malformed", onSASL(handshake("PLAIN"), authenticate("alice"))},
		{"sasl-plain-right", onSASL(handshake("PLAIN"), authenticate("\x00alice\x00alice-secret"), metadata())},
		{"sasl-authenticate-first", onSASL(authenticate("\x00alice\x00alice-secret"))},
		{"sasl-metadata-first", onSASL(metadata())},
		{"sasl-metadata-after-handshake", onSASL(handshake("PLAIN"), metadata())},
		{"sasl-handshake-twice", onSASL(handshake("PLAIN"), handshake("PLAIN"))},
		{"sasl-authenticate-after-login", onSASL(handshake("PLAIN"), authenticate("\x00alice\x00alice-secret"), authenticate("\x00alice\x00alice-secret"))},
	}
}

// onSASL sends reqs in order on a new connection to the SASL listener
// and answers their responses; a connection the broker closes ends the
// case with what it answered before, and "closed".
func onSASL(reqs ...kmsg.Request) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		c, err := kwire.Dial(s.saslAddr, "protodiff", s.versions)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errSetup, s.name, err)
		}
		defer c.Close()
		var out []kmsg.Response
		for _, req := range reqs {
			resp, _, err := c.Do(req, 15*time.Second)
			s.sent = append(s.sent, fmt.Sprintf("%s v%d", kmsg.NameForKey(req.Key()), req.GetVersion()))
			if err != nil {
				return out, errClosed
			}
			out = append(out, resp)
		}
		return out, nil
	}
}

// errClosed is a connection the broker closed.
var errClosed = errors.New("closed")
