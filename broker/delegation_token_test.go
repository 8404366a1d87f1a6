package broker_test

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/clock"
	"github.com/klogdev/klog/internal/testkit"
)

// tokenSecret is the delegation.token.secret.key of the token tests.
const tokenSecret = "token-secret"

// tokenNode is a node of the token tests: PLAINTEXT, whose clients are
// super users, and SASL_PLAINTEXT with SCRAM-SHA-512 users admin (a super
// user), alice, bob and carol, each whose password is its name; the
// authorizer on, and delegation tokens with tokenSecret unless configs
// say otherwise.
type tokenNode struct {
	t     *testing.T
	n     *broker.Node
	clock *clock.Clock
	seen  *principals
}

func startTokenNode(t *testing.T, kv ...string) *tokenNode {
	t.Helper()
	configs := withConfigs(map[string]string{
		"listeners":                   "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms":     "SCRAM-SHA-512",
		"authorizer.class.name":       "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                 "User:admin;User:ANONYMOUS",
		"delegation.token.secret.key": tokenSecret,
	}, kv...)
	for k, v := range configs {
		if v == "" {
			delete(configs, k)
		}
	}
	tn := &tokenNode{t: t, clock: clock.New(), seen: &principals{}}
	n, err := broker.Start(testkit.Context(t), broker.Config{Memory: true, Listen: "127.0.0.1:0", Configs: configs,
		Logger: testkit.Logger(t, slog.LevelWarn), Clock: tn.clock, RequestHook: tn.seen.hook})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	tn.n = n
	var ups []kadm.UpsertSCRAM
	for _, u := range []string{"admin", "alice", "bob", "carol"} {
		ups = append(ups, kadm.UpsertSCRAM{User: u, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: u})
	}
	res, err := kadm.NewClient(tn.plain()).AlterUserSCRAMs(testkit.Context(t), nil, ups)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// plain is a client of the PLAINTEXT listener.
func (tn *tokenNode) plain() *kgo.Client {
	return tn.client("PLAINTEXT")
}

// client is a client of listener, with opts.
func (tn *tokenNode) client(listener string, opts ...kgo.Opt) *kgo.Client {
	tn.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(tn.n.ListenerAddr(listener).String()), kgo.RequestRetries(0)}, opts...)...)
	if err != nil {
		tn.t.Fatal(err)
	}
	tn.t.Cleanup(cl.Close)
	return cl
}

// as is a client of the SASL listener logged in as user.
func (tn *tokenNode) as(user string) *kgo.Client {
	return tn.client("SASL_PLAINTEXT", kgo.SASL(scram.Auth{User: user, Pass: user}.AsSha512Mechanism()))
}

// withToken is a client of the SASL listener logged in with a token.
func (tn *tokenNode) withToken(id string, hmacBytes []byte) *kgo.Client {
	return tn.client("SASL_PLAINTEXT", kgo.SASL(scram.Auth{User: id, Pass: base64.StdEncoding.EncodeToString(hmacBytes), IsToken: true}.AsSha512Mechanism()))
}

// create creates a token as cl's principal, with renewers and, when
// owner is set, for that owner.
func (tn *tokenNode) create(cl *kgo.Client, owner string, renewers ...string) *kmsg.CreateDelegationTokenResponse {
	tn.t.Helper()
	req := kmsg.NewPtrCreateDelegationTokenRequest()
	if owner != "" {
		req.OwnerPrincipalType, req.OwnerPrincipalName = new("User"), &owner
	}
	for _, r := range renewers {
		rr := kmsg.NewCreateDelegationTokenRequestRenewer()
		rr.PrincipalType, rr.PrincipalName = splitUser(r)
		req.Renewers = append(req.Renewers, rr)
	}
	req.MaxLifetimeMillis = -1
	resp, err := req.RequestWith(testkit.Context(tn.t), cl)
	if err != nil {
		tn.t.Fatal(err)
	}
	return resp
}

// describe is the ids of the tokens cl's principal is shown, of owners
// (nil: all).
func (tn *tokenNode) describe(cl *kgo.Client, owners ...string) (int16, []string, []kmsg.DescribeDelegationTokenResponseTokenDetail) {
	tn.t.Helper()
	req := kmsg.NewPtrDescribeDelegationTokenRequest()
	for _, o := range owners {
		ro := kmsg.NewDescribeDelegationTokenRequestOwner()
		ro.PrincipalType, ro.PrincipalName = splitUser(o)
		req.Owners = append(req.Owners, ro)
	}
	resp, err := req.RequestWith(testkit.Context(tn.t), cl)
	if err != nil {
		tn.t.Fatal(err)
	}
	var ids []string
	for _, d := range resp.TokenDetails {
		ids = append(ids, d.TokenID)
	}
	return resp.ErrorCode, ids, resp.TokenDetails
}

// renew renews the token of hmac by period.
func (tn *tokenNode) renew(cl *kgo.Client, hmacBytes []byte, period time.Duration) (int16, int64) {
	tn.t.Helper()
	req := kmsg.NewPtrRenewDelegationTokenRequest()
	req.HMAC, req.RenewTimeMillis = hmacBytes, period.Milliseconds()
	resp, err := req.RequestWith(testkit.Context(tn.t), cl)
	if err != nil {
		tn.t.Fatal(err)
	}
	return resp.ErrorCode, resp.ExpiryTimestamp
}

// expire expires the token of hmac period from now (negative: at once).
func (tn *tokenNode) expire(cl *kgo.Client, hmacBytes []byte, period time.Duration) (int16, int64) {
	tn.t.Helper()
	req := kmsg.NewPtrExpireDelegationTokenRequest()
	req.HMAC, req.ExpiryPeriodMillis = hmacBytes, period.Milliseconds()
	if period < 0 {
		req.ExpiryPeriodMillis = -1
	}
	resp, err := req.RequestWith(testkit.Context(tn.t), cl)
	if err != nil {
		tn.t.Fatal(err)
	}
	return resp.ErrorCode, resp.ExpiryTimestamp
}

// grant gives principal op on the USER resource of user, or on the
// DELEGATION_TOKEN resource of a token id.
func (tn *tokenNode) grant(principal string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) {
	tn.t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, kmsg.ACLResourcePatternTypeLiteral
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, kmsg.ACLPermissionTypeAllow
	req.Creations = append(req.Creations, c)
	resp, err := req.RequestWith(testkit.Context(tn.t), tn.plain())
	if err == nil {
		err = kerr.ErrorForCode(resp.Results[0].ErrorCode)
	}
	if err != nil {
		tn.t.Fatal(err)
	}
}

func splitUser(p string) (string, string) {
	for i := range len(p) {
		if p[i] == ':' {
			return p[:i], p[i+1:]
		}
	}
	return "User", p
}

// wantHMAC is Kafka's HMAC of a token id under tokenSecret.
func wantHMAC(id string) []byte {
	mac := hmac.New(sha512.New, []byte(tokenSecret))
	mac.Write([]byte(id))
	return mac.Sum(nil)
}

func codeIs(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if got != wantCode {
		t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// TestDelegationTokens creates, describes, renews and expires a token as
// Kafka does: its HMAC is HmacSHA512 of its id under the secret key, its
// times follow delegation.token.expiry.time.ms and max.lifetime.ms, its
// owner and renewers may renew and expire it and others may not, and
// describe shows it to its owner, its renewers, super users and those
// given DESCRIBE_TOKENS on its owner or DESCRIBE on the token.
func TestDelegationTokens(t *testing.T) {
	tn := startTokenNode(t, "delegation.token.expiry.time.ms", "3600000", "delegation.token.max.lifetime.ms", "7200000")
	alice, bob, carol, admin := tn.as("alice"), tn.as("bob"), tn.as("carol"), tn.as("admin")
	before := tn.clock.Now().UnixMilli()
	c := tn.create(alice, "", "User:bob")
	codeIs(t, "create", c.ErrorCode, nil)
	if c.PrincipalName != "alice" || c.PrincipalType != "User" || c.TokenRequesterPrincipalName != "alice" || c.TokenID == "" {
		t.Fatalf("created %+v", c)
	}
	if !hmac.Equal(c.HMAC, wantHMAC(c.TokenID)) {
		t.Errorf("HMAC %x, want HmacSHA512(secret, id)", c.HMAC)
	}
	if c.IssueTimestamp < before || c.ExpiryTimestamp != c.IssueTimestamp+3600000 || c.MaxTimestamp != c.IssueTimestamp+7200000 {
		t.Errorf("issued %d, expires %d, max %d: want an hour and two hours after issue", c.IssueTimestamp, c.ExpiryTimestamp, c.MaxTimestamp)
	}

	for _, tc := range []struct {
		who  string
		cl   *kgo.Client
		want int
	}{{"owner", alice, 1}, {"renewer", bob, 1}, {"super user", admin, 1}, {"other", carol, 0}} {
		if _, ids, _ := tn.describe(tc.cl); len(ids) != tc.want {
			t.Errorf("describe as %s: %v, want %d tokens", tc.who, ids, tc.want)
		}
	}
	if _, ids, _ := tn.describe(admin, "User:carol"); len(ids) != 0 {
		t.Errorf("describe of carol's tokens: %v", ids)
	}
	if _, ids, _ := tn.describe(admin, "User:bob"); len(ids) != 1 {
		t.Errorf("describe of bob's tokens (a renewer's): %v", ids)
	}
	req := kmsg.NewPtrDescribeDelegationTokenRequest()
	req.Owners = []kmsg.DescribeDelegationTokenRequestOwner{}
	if resp, err := req.RequestWith(testkit.Context(t), admin); err != nil || len(resp.TokenDetails) != 0 {
		t.Errorf("describe of no owners: %v %+v", err, resp)
	}
	tn.grant("User:carol", kmsg.ACLOperationDescribeTokens, kmsg.ACLResourceTypeUser, "User:alice")
	_, ids, details := tn.describe(carol)
	if len(ids) != 1 || !hmac.Equal(details[0].HMAC, c.HMAC) || details[0].PrincipalName != "alice" ||
		len(details[0].Renewers) != 1 || details[0].Renewers[0].PrincipalName != "bob" || details[0].ExpiryTimestamp != c.ExpiryTimestamp {
		t.Errorf("describe as carol with DESCRIBE_TOKENS on alice: %+v", details)
	}

	code, _ := tn.renew(carol, c.HMAC, time.Minute)
	codeIs(t, "renew by another", code, kerr.DelegationTokenOwnerMismatch)
	code, _ = tn.renew(bob, []byte("nope"), time.Minute)
	codeIs(t, "renew of an unknown HMAC", code, kerr.DelegationTokenNotFound)
	code, expiry := tn.renew(bob, c.HMAC, time.Minute)
	codeIs(t, "renew by the renewer", code, nil)
	if now := tn.clock.Now().UnixMilli(); expiry < now || expiry > now+60000 {
		t.Errorf("renewed for a minute until %d (now %d)", expiry, now)
	}
	code, expiry = tn.renew(alice, c.HMAC, 0)
	codeIs(t, "renew by the owner", code, nil)
	if now := tn.clock.Now().UnixMilli(); expiry < now+3600000-60000 || expiry > now+3600000 {
		t.Errorf("renewed by default until %d, want delegation.token.expiry.time.ms from %d", expiry, now)
	}
	for range 2 {
		if _, err := tn.clock.Advance(50 * time.Minute); err != nil {
			t.Fatal(err)
		}
		code, expiry = tn.renew(alice, c.HMAC, 0)
	}
	codeIs(t, "renew past the maximum lifetime", code, nil)
	if expiry != c.MaxTimestamp {
		t.Errorf("renewed until %d, past the maximum %d", expiry, c.MaxTimestamp)
	}

	code, _ = tn.expire(carol, c.HMAC, -1)
	codeIs(t, "expire by another", code, kerr.DelegationTokenOwnerMismatch)
	code, expiry = tn.expire(alice, c.HMAC, time.Minute)
	codeIs(t, "expire in a minute", code, nil)
	if now := tn.clock.Now().UnixMilli(); expiry < now || expiry > now+60000 {
		t.Errorf("expires at %d, want within a minute of %d", expiry, now)
	}
	code, _ = tn.expire(bob, c.HMAC, -1)
	codeIs(t, "expire now by the renewer", code, nil)
	if _, ids, _ := tn.describe(admin); len(ids) != 0 {
		t.Errorf("an expired token is described: %v", ids)
	}
	code, _ = tn.renew(alice, c.HMAC, 0)
	codeIs(t, "renew of an expired token", code, kerr.DelegationTokenNotFound)
}

// TestDelegationTokenRefusals checks Kafka's refusals: token requests on
// PLAINTEXT and on a token-authenticated connection, tokens disabled
// without a secret key, a token for another owner without CREATE_TOKENS
// on the owner, a renewer that is not a User, and a lapsed token.
func TestDelegationTokenRefusals(t *testing.T) {
	tn := startTokenNode(t)
	plain := tn.plain()
	c := tn.create(plain, "")
	codeIs(t, "create on PLAINTEXT", c.ErrorCode, kerr.DelegationTokenRequestNotAllowed)
	if c.PrincipalName != "ANONYMOUS" || c.IssueTimestamp != -1 || c.ExpiryTimestamp != -1 || c.MaxTimestamp != -1 {
		t.Errorf("refused create %+v, want the requester as owner and timestamps of -1", c)
	}
	code, expiry := tn.renew(plain, []byte("x"), 0)
	codeIs(t, "renew on PLAINTEXT", code, kerr.DelegationTokenRequestNotAllowed)
	if expiry != -1 {
		t.Errorf("refused renew answers expiry %d, want -1", expiry)
	}
	code, _ = tn.expire(plain, []byte("x"), 0)
	codeIs(t, "expire on PLAINTEXT", code, kerr.DelegationTokenRequestNotAllowed)
	code, _, _ = tn.describe(plain)
	codeIs(t, "describe on PLAINTEXT", code, kerr.DelegationTokenRequestNotAllowed)

	alice := tn.as("alice")
	c = tn.create(alice, "bob")
	codeIs(t, "create for bob without CREATE_TOKENS", c.ErrorCode, kerr.DelegationTokenAuthorizationFailed)
	tn.grant("User:alice", kmsg.ACLOperationCreateTokens, kmsg.ACLResourceTypeUser, "User:bob")
	c = tn.create(alice, "bob")
	codeIs(t, "create for bob with CREATE_TOKENS", c.ErrorCode, nil)
	if c.PrincipalName != "bob" || c.TokenRequesterPrincipalName != "alice" {
		t.Errorf("token for bob: owner %s, requester %s", c.PrincipalName, c.TokenRequesterPrincipalName)
	}
	if _, _, d := tn.describe(tn.as("bob")); len(d) != 1 || d[0].TokenRequesterPrincipalName != "alice" {
		t.Errorf("bob's tokens: %+v", d)
	}
	bad := tn.create(alice, "", "Group:ops")
	codeIs(t, "create with a Group renewer", bad.ErrorCode, kerr.InvalidPrincipalType)

	viaToken := tn.withToken(c.TokenID, c.HMAC)
	code, _, _ = tn.describe(viaToken)
	codeIs(t, "describe over a token-authenticated connection", code, kerr.DelegationTokenRequestNotAllowed)
	codeIs(t, "create over a token-authenticated connection", tn.create(viaToken, "").ErrorCode, kerr.DelegationTokenRequestNotAllowed)

	code, _ = tn.expire(alice, c.HMAC, 0)
	codeIs(t, "expire now (period 0) by the requester", code, kerr.DelegationTokenOwnerMismatch)
	code, _ = tn.expire(tn.as("bob"), c.HMAC, 0)
	codeIs(t, "expire with period 0 by the owner", code, nil)
	if _, err := tn.clock.Advance(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	code, _ = tn.renew(tn.as("bob"), c.HMAC, 0)
	codeIs(t, "renew of a lapsed token", code, kerr.DelegationTokenExpired)
	code, _ = tn.expire(tn.as("bob"), c.HMAC, time.Minute)
	codeIs(t, "expire later of a lapsed token", code, kerr.DelegationTokenExpired)

	off := startTokenNode(t, "delegation.token.secret.key", "")
	c = off.create(off.as("alice"), "")
	codeIs(t, "create without a secret key", c.ErrorCode, kerr.DelegationTokenAuthDisabled)
	if c.IssueTimestamp != 0 || c.PrincipalName != "alice" {
		t.Errorf("create without a secret key answers %+v, want alice as owner and timestamps of 0", c)
	}
	code, _, _ = off.describe(off.as("alice"))
	codeIs(t, "describe without a secret key", code, kerr.DelegationTokenAuthDisabled)
	code, _ = off.renew(off.as("alice"), []byte("x"), 0)
	codeIs(t, "renew without a secret key", code, kerr.DelegationTokenAuthDisabled)
}

// TestDelegationTokenLogin logs in with a token through franz-go's SCRAM
// with the tokenauth extension: the requests' principal is the token's
// owner, a wrong HMAC, an unknown id and an expired token are refused,
// and the controller's sweep removes the token once it lapsed.
func TestDelegationTokenLogin(t *testing.T) {
	tn := startTokenNode(t, "delegation.token.expiry.time.ms", "60000")
	ctx := testkit.Context(t)
	alice := tn.as("alice")
	c := tn.create(alice, "")
	codeIs(t, "create", c.ErrorCode, nil)

	login := func(id string, h []byte) error {
		_, err := kadm.NewClient(tn.withToken(id, h)).BrokerMetadata(ctx)
		return err
	}
	if err := login(c.TokenID, c.HMAC); err != nil {
		t.Fatalf("login with the token: %v", err)
	}
	if p := tn.seen.of("SASL_PLAINTEXT", kmsg.Metadata); p != "User:alice" {
		t.Errorf("principal of a token login %q, want the owner User:alice", p)
	}
	for _, tc := range []struct {
		name string
		id   string
		h    []byte
	}{
		{"wrong HMAC", c.TokenID, wantHMAC("other")},
		{"unknown token", "nope", c.HMAC},
		{"a user's name and password as a token", "alice", []byte("alice")},
	} {
		if err := login(tc.id, tc.h); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s: %v, want SASL_AUTHENTICATION_FAILED", tc.name, err)
		}
	}

	if _, err := tn.n.AdvanceClock(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ids, _ := tn.describe(tn.as("admin")); len(ids) != 0 {
		t.Errorf("the sweep left lapsed tokens %v", ids)
	}
	if err := login(c.TokenID, c.HMAC); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("login with a lapsed token: %v", err)
	}
}

// TestDelegationTokenRestart checks a token survives a restart of its
// node from its data directory: it is described again, and logs in with
// the HMAC computed from the secret key alone.
func TestDelegationTokenRestart(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.DataDir(t.TempDir()),
		brokertest.Config("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"),
		brokertest.Config("sasl.enabled.mechanisms", "SCRAM-SHA-512"),
		brokertest.Config("delegation.token.secret.key", tokenSecret))
	saslClient := func(m sasl.Mechanism) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.Broker().ListenerAddr("SASL_PLAINTEXT").String()), kgo.SASL(m), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	up := kadm.UpsertSCRAM{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "alice"}
	if res, err := kadm.NewClient(n.Client()).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{up}); err != nil || res.Error() != nil {
		t.Fatal(err, res.Error())
	}
	created, err := kmsg.NewPtrCreateDelegationTokenRequest().RequestWith(ctx, saslClient(scram.Auth{User: "alice", Pass: "alice"}.AsSha512Mechanism()))
	if err != nil || created.ErrorCode != 0 {
		t.Fatal(err, created)
	}
	n.Restart()
	token := scram.Auth{User: created.TokenID, Pass: base64.StdEncoding.EncodeToString(created.HMAC), IsToken: true}.AsSha512Mechanism()
	if _, err := kadm.NewClient(saslClient(token)).BrokerMetadata(ctx); err != nil {
		t.Fatalf("login with the token after a restart: %v", err)
	}
	described, err := kmsg.NewPtrDescribeDelegationTokenRequest().RequestWith(ctx, saslClient(scram.Auth{User: "alice", Pass: "alice"}.AsSha512Mechanism()))
	if err != nil || len(described.TokenDetails) != 1 || described.TokenDetails[0].TokenID != created.TokenID ||
		described.TokenDetails[0].ExpiryTimestamp != created.ExpiryTimestamp {
		t.Fatalf("described after a restart: %v %+v", err, described)
	}
}
