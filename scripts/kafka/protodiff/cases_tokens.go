package main

import "github.com/twmb/franz-go/pkg/kmsg"

// The corpus's delegation token cases (keys 38-41). The corpus talks
// PLAINTEXT, where both brokers refuse every token request with
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, answering the requester as owner,
// and an expiry of -1 for renew and expire; the requests over SASL are
// the broker's tests and scripts/kafka/delegation-tokens.sh.
func tokenCases() []testCase {
	return []testCase{
		{"createdelegationtoken-plaintext", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrCreateDelegationTokenRequest()
			r := kmsg.NewCreateDelegationTokenRequestRenewer()
			r.PrincipalType, r.PrincipalName = "User", "bob"
			req.Renewers, req.MaxLifetimeMillis = append(req.Renewers, r), -1
			return req
		})},
		{"createdelegationtoken-plaintext-owner", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrCreateDelegationTokenRequest()
			req.OwnerPrincipalType, req.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("alice")
			return req
		})},
		{"renewdelegationtoken-plaintext", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrRenewDelegationTokenRequest()
			req.HMAC, req.RenewTimeMillis = []byte("hmac"), 1000
			return req
		})},
		{"expiredelegationtoken-plaintext", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrExpireDelegationTokenRequest()
			req.HMAC, req.ExpiryPeriodMillis = []byte("hmac"), -1
			return req
		})},
		{"describedelegationtoken-plaintext", noSetup(func(*side) kmsg.Request {
			return kmsg.NewPtrDescribeDelegationTokenRequest()
		})},
	}
}
