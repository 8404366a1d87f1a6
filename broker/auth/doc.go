// Package auth is who a client is and what it may do: the SASL mechanisms
// a listener enables (PLAIN, SCRAM-SHA-256 and -512, OAUTHBEARER) and the
// SCRAM credentials they check, the principal a TLS client certificate
// maps to, the authorizer (Kafka's StandardAuthorizer semantics over the
// ACLs of the metadata image) and client quotas. The transport asks it to
// authenticate a connection and the handlers ask it to authorize a
// request; what it decides on (credentials, ACLs, quotas) comes from
// metadata records, never from state of its own, but for OAUTHBEARER's
// JWKS validator, which keeps the key set of the issuer it trusts
// (jwks.go).
package auth
