package auth

// SCRAM-SHA-256 and SCRAM-SHA-512, the server side of RFC 5802 and RFC
// 7677 as Kafka's ScramSaslServer serves it:
//
//	client-first  n,[a=authzid],n=user,r=cnonce[,ext=value]...
//	server-first  r=cnonce+snonce,s=base64(salt),i=iterations
//	client-final  c=base64(gs2-header),r=cnonce+snonce,p=base64(proof)
//	server-final  v=base64(ServerSignature)
//
// The proof is checked against the StoredKey of the credential, never a
// password: ClientKey := proof XOR HMAC(StoredKey, AuthMessage), and
// H(ClientKey) must equal StoredKey (compared in constant time).
//
// The nonce of client-final must end with the combined nonce, Kafka's
// check and not RFC 5802's equality: librdkafka 2.0.2
// (Debian's, under kcat and python3-confluent-kafka) sends its own
// nonce again in front of the combined one, and Kafka admits it. Stricter
// than Kafka where RFC 5802 says so: the channel binding of client-final
// must be the gs2 header of client-first ("biws" for "n,,"), and a
// mandatory extension (m=) fails. An unknown user
// is answered with a server-first (a salt derived from the user's name and
// a secret of the mechanism, so that it is the same at every attempt) and
// fails at client-final with the message a wrong password gets, so that
// neither the answer nor the step tells whether the user exists; Kafka
// fails it at client-first. With Kafka's delegation-token extension
// (tokenauth=true) the user is a token id and the password the token's
// base64 HMAC (KIP-48): the credential is derived from the HMAC that the
// CredentialSource, a TokenSource too, computes; the principal is the
// token's owner and the session ends at the token's expiry. An unknown or
// lapsed token fails as an unknown user does. Messages
// are Kafka's: every failure reads "Authentication failed during
// authentication due to invalid credentials with SASL mechanism ...",
// except an authorization id other than the user's, which Kafka names.

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"strconv"
	"strings"
	"time"
)

// maxSCRAMToken bounds a client's SCRAM message: a user name, a nonce and
// a proof are far below it.
const maxSCRAMToken = 4096

// fakeSaltBytes is the length of the salt an unknown user is answered
// with, that of the salts kadm and klog make.
const fakeSaltBytes = 24

type scramMechanism struct {
	name  string
	hash  func() hash.Hash
	creds CredentialSource
	// secret makes the fake salt of unknown users; fakeStored is their
	// StoredKey, which no proof matches.
	secret     [32]byte
	fakeStored []byte
	// tokens caches the credentials derived from delegation tokens'
	// HMACs (a salting each), by token id and HMAC.
	tokens tokenCredentials
}

// newSCRAM returns the mechanism name (SCRAM-SHA-256 or -512) checking
// the credentials of creds.
func newSCRAM(name string, creds CredentialSource) (*scramMechanism, bool) {
	h, ok := scramHash(name)
	if !ok {
		return nil, false
	}
	m := &scramMechanism{name: name, hash: h, creds: creds}
	rand.Read(m.secret[:])
	fake := make([]byte, h().Size())
	rand.Read(fake)
	m.fakeStored = digest(h, fake)
	return m, true
}

func (m *scramMechanism) Name() string { return m.name }

func (m *scramMechanism) Start() Exchange { return &scramExchange{m: m} }

// credential is user's credential, or the fake one of an unknown user.
func (m *scramMechanism) credential(user string) (SCRAMCredential, bool) {
	if m.creds != nil {
		if c, ok := m.creds.SCRAMCredential(user, m.name); ok {
			return c, true
		}
	}
	salt := keyed(m.hash, m.secret[:], []byte(user))[:fakeSaltBytes]
	return SCRAMCredential{Salt: salt, StoredKey: m.fakeStored, Iterations: MinSCRAMIterations}, false
}

// The steps of a SCRAM exchange.
const (
	scramFirst = iota
	scramFinal
	scramDone
	scramFailed
)

// scramExchange holds what client-final is checked against, and nothing
// once the exchange is over.
type scramExchange struct {
	m     *scramMechanism
	step  int
	user  string
	known bool
	cred  SCRAMCredential
	// token is the delegation token a tokenauth exchange authenticates
	// with: its owner is the principal.
	token *DelegationToken
	// gs2 is client-first's gs2 header, nonce the combined nonce, and
	// authPrefix the AuthMessage up to client-final-without-proof.
	gs2        string
	nonce      string
	authPrefix []byte
}

func (x *scramExchange) Principal() string {
	switch {
	case x.step != scramDone:
		return ""
	case x.token != nil:
		return "User:" + x.token.Owner
	}
	return "User:" + x.user
}

func (x *scramExchange) Expiry() time.Time {
	if x.step != scramDone || x.token == nil {
		return time.Time{}
	}
	return x.token.Expiry
}

// TokenAuthenticated reports whether the exchange authenticated a
// delegation token (KIP-48's tokenAuthenticated principal).
func (x *scramExchange) TokenAuthenticated() bool { return x.step == scramDone && x.token != nil }

// tokenCredential is the credential of the delegation token id, or the
// fake one of an unknown user when there is no such token.
func (x *scramExchange) tokenCredential(id string) (SCRAMCredential, bool) {
	if src, ok := x.m.creds.(TokenSource); ok {
		if tok, ok := src.DelegationToken(id); ok {
			if cred, err := x.m.tokens.get(x.m, id, tok.HMAC); err == nil {
				x.token = &tok
				return cred, true
			}
		}
	}
	return x.m.credential("\x00token\x00" + id)
}

func (x *scramExchange) Next(token []byte) ([]byte, bool, error) {
	var (
		answer []byte
		err    error
	)
	switch x.step {
	case scramFirst:
		answer, err = x.first(token)
	case scramFinal:
		answer, err = x.final(token)
	default:
		err = invalidCredentials(x.m.name, "a message after the exchange ended")
	}
	if err != nil {
		x.step, x.token = scramFailed, nil
		err = claimed(err, x.user)
	}
	if x.step != scramFinal {
		// Over: nothing is kept but the user a success names.
		x.cred, x.gs2, x.nonce, x.authPrefix = SCRAMCredential{}, "", "", nil
	}
	if err != nil {
		return nil, false, err
	}
	return answer, x.step == scramDone, nil
}

// first answers client-first with server-first.
func (x *scramExchange) first(token []byte) ([]byte, error) {
	cf, why := parseClientFirst(token)
	if why != "" {
		return nil, invalidCredentials(x.m.name, "client-first: "+why)
	}
	x.user = cf.user // named in a failure, whoever it is
	if cf.authzid != "" && cf.authzid != cf.user {
		return nil, refused("Authentication failed: Client requested an authorization id that is different from username",
			"authorization id "+cf.authzid+" is not the user "+cf.user)
	}
	var (
		cred  SCRAMCredential
		known bool
	)
	if cf.token {
		cred, known = x.tokenCredential(cf.user)
	} else {
		cred, known = x.m.credential(cf.user)
	}
	if cred.Iterations < MinSCRAMIterations || cred.Iterations > MaxSCRAMIterations {
		return nil, invalidCredentials(x.m.name, "the credential's iteration count is out of bounds")
	}
	var snonce [18]byte
	rand.Read(snonce[:])
	nonce := cf.nonce + base64.RawStdEncoding.EncodeToString(snonce[:])
	serverFirst := "r=" + nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) + ",i=" + strconv.Itoa(int(cred.Iterations))
	x.user, x.known, x.cred, x.gs2, x.nonce = cf.user, known, cred, cf.gs2, nonce
	x.authPrefix = []byte(cf.bare + "," + serverFirst + ",")
	x.step = scramFinal
	return []byte(serverFirst), nil
}

// final checks client-final's proof and answers with the server's
// signature.
func (x *scramExchange) final(token []byte) ([]byte, error) {
	cf, why := parseClientFinal(token, x.m.hash().Size())
	switch {
	case why != "":
	case cf.binding != base64.StdEncoding.EncodeToString([]byte(x.gs2)):
		why = "the channel binding is not client-first's gs2 header"
	case !strings.HasSuffix(cf.nonce, x.nonce):
		why = "the nonce does not end with the one of server-first"
	}
	if why != "" {
		return nil, invalidCredentials(x.m.name, "client-final: "+why)
	}
	authMessage := append(x.authPrefix, cf.withoutProof...)
	signature := keyed(x.m.hash, x.cred.StoredKey, authMessage)
	clientKey := make([]byte, len(cf.proof))
	subtle.XORBytes(clientKey, cf.proof, signature)
	if subtle.ConstantTimeCompare(digest(x.m.hash, clientKey), x.cred.StoredKey) != 1 || !x.known {
		reason := "wrong proof"
		if !x.known {
			reason = "unknown user"
		}
		return nil, invalidCredentials(x.m.name, reason)
	}
	x.step = scramDone
	return []byte("v=" + base64.StdEncoding.EncodeToString(keyed(x.m.hash, x.cred.ServerKey, authMessage))), nil
}

// clientFirst is a parsed client-first message.
type clientFirst struct {
	gs2, authzid, user, nonce string
	bare                      string // client-first-message-bare
	token                     bool   // tokenauth=true: a delegation token
}

// parseClientFirst parses client-first as Kafka's ClientFirstMessage does,
// saying why it is malformed when it is.
func parseClientFirst(token []byte) (clientFirst, string) {
	var cf clientFirst
	if why := checkToken(token); why != "" {
		return cf, why
	}
	s := string(token)
	rest, ok := strings.CutPrefix(s, "n,")
	if !ok {
		return cf, "the gs2 header does not start with \"n,\""
	}
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return cf, "no gs2 header"
	}
	if authz != "" {
		a, ok := strings.CutPrefix(authz, "a=")
		if cf.authzid, ok = unescapeName(a, ok); !ok {
			return cf, "malformed authorization id"
		}
	}
	cf.gs2, cf.bare = s[:len(s)-len(bare)], bare
	fields := strings.Split(bare, ",")
	if len(fields) < 2 {
		return cf, "no user or nonce"
	}
	name, ok := strings.CutPrefix(fields[0], "n=")
	if cf.user, ok = unescapeName(name, ok); !ok {
		return cf, "malformed user name"
	}
	if cf.nonce, ok = strings.CutPrefix(fields[1], "r="); !ok || !printable(cf.nonce) {
		return cf, "malformed nonce"
	}
	for _, ext := range fields[2:] {
		k, v, ok := strings.Cut(ext, "=")
		if !ok || k == "" || v == "" || strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			return cf, "malformed extension"
		}
		if k == "tokenauth" && strings.EqualFold(v, "true") {
			cf.token = true
		}
	}
	return cf, ""
}

// clientFinal is a parsed client-final message.
type clientFinal struct {
	binding, nonce string
	withoutProof   string // client-final-message-without-proof
	proof          []byte
}

// parseClientFinal parses client-final, whose proof must be size bytes.
func parseClientFinal(token []byte, size int) (clientFinal, string) {
	var cf clientFinal
	if why := checkToken(token); why != "" {
		return cf, why
	}
	s := string(token)
	i := strings.LastIndex(s, ",p=")
	if i < 0 {
		return cf, "no proof"
	}
	cf.withoutProof = s[:i]
	proof, err := base64.StdEncoding.Strict().DecodeString(s[i+3:])
	if err != nil || len(proof) != size {
		return cf, "malformed proof"
	}
	cf.proof = proof
	fields := strings.Split(cf.withoutProof, ",")
	var ok bool
	if cf.binding, ok = strings.CutPrefix(fields[0], "c="); !ok {
		return cf, "no channel binding"
	}
	if len(fields) < 2 {
		return cf, "no nonce"
	}
	if cf.nonce, ok = strings.CutPrefix(fields[1], "r="); !ok {
		return cf, "no nonce"
	}
	return cf, ""
}

// checkToken says why a SCRAM message is too long or not of the
// characters Kafka's grammar allows (%x01-7F), if it is.
func checkToken(b []byte) string {
	if len(b) > maxSCRAMToken {
		return "too long"
	}
	for _, c := range b {
		if c == 0 || c > 0x7f {
			return "a character outside %x01-7F"
		}
	}
	return ""
}

// printable reports whether s is a non-empty run of RFC 5802's printable
// characters (%x21-7E but ',').
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e || s[i] == ',' {
			return false
		}
	}
	return s != ""
}

// unescapeName decodes a non-empty saslname, in which '=' is written =3D
// and ',' =2C; ok false (a missing prefix) fails it.
func unescapeName(s string, ok bool) (string, bool) {
	if !ok || s == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}
