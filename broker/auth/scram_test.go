package auth_test

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"hash"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klogdev/klog/broker/auth"
)

// creds is a CredentialSource over a map by user and mechanism.
type creds map[[2]string]auth.SCRAMCredential

func (c creds) SCRAMCredential(user, mechanism string) (auth.SCRAMCredential, bool) {
	cred, ok := c[[2]string{user, mechanism}]
	return cred, ok
}

// salt is the salt of the test credentials.
var salt = []byte("0123456789abcdef01234567")

// withUser returns creds holding user's password for mechanism.
func withUser(t *testing.T, c creds, user, mechanism, password string, iterations int32) creds {
	t.Helper()
	cred, err := auth.NewSCRAMCredential(mechanism, password, salt, iterations)
	if err != nil {
		t.Fatal(err)
	}
	c[[2]string{user, mechanism}] = cred
	return c
}

// mechanism returns the one mechanism named name over c.
func mechanism(t *testing.T, name string, c auth.CredentialSource) auth.Mechanism {
	t.Helper()
	ms, err := auth.Mechanisms([]string{name}, c, nil)
	if err != nil || len(ms) != 1 {
		t.Fatalf("Mechanisms(%s): %v, %v", name, ms, err)
	}
	return ms[0]
}

// clientOf is franz-go's client side of a SCRAM mechanism, logging in as
// user with password, or as a says when given.
func clientOf(name, user, password string, a ...scram.Auth) sasl.Mechanism {
	if len(a) == 0 {
		a = append(a, scram.Auth{User: user, Pass: password})
	}
	if name == auth.SCRAMSHA256 {
		return a[0].AsSha256Mechanism()
	}
	return a[0].AsSha512Mechanism()
}

// login runs a whole exchange of franz-go's client with x, returning the
// server's error, if any.
func login(t *testing.T, client sasl.Mechanism, x auth.Exchange) error {
	t.Helper()
	session, msg, err := client.Authenticate(context.Background(), "localhost:9092")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		answer, done, err := x.Next(msg)
		if err != nil {
			return err
		}
		clientDone, next, cerr := session.Challenge(answer)
		if cerr != nil {
			t.Fatalf("client refused the server's answer %q: %v", answer, cerr)
		}
		if done != clientDone {
			t.Fatalf("server done %v, client done %v", done, clientDone)
		}
		if done {
			return nil
		}
		msg = next
	}
	t.Fatal("exchange did not end")
	return nil
}

// wantInvalid checks err is the failure a wrong password gets.
func wantInvalid(t *testing.T, err error, mech string) {
	t.Helper()
	want := "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech
	if err == nil || err.Error() != want || !errors.Is(err, auth.ErrAuthenticationFailed) {
		t.Fatalf("err = %v, want %q wrapping ErrAuthenticationFailed", err, want)
	}
}

func TestSCRAMLogin(t *testing.T) {
	for _, mech := range auth.SCRAMMechanisms {
		t.Run(mech, func(t *testing.T) {
			c := withUser(t, creds{}, "alice", mech, "secret", 8192)
			c = withUser(t, c, "a=b,c", mech, "other", 4096)
			m := mechanism(t, mech, c)
			x := m.Start()
			if err := login(t, clientOf(mech, "alice", "secret"), x); err != nil {
				t.Fatalf("login: %v", err)
			}
			if got := x.Principal(); got != "User:alice" {
				t.Errorf("principal %q", got)
			}
			if !x.Expiry().IsZero() {
				t.Errorf("expiry %v", x.Expiry())
			}
			// The user's own authorization id, which the channel binding
			// repeats.
			zid := clientOf(mech, "", "", scram.Auth{Zid: "alice", User: "alice", Pass: "secret"})
			if err := login(t, zid, m.Start()); err != nil {
				t.Fatalf("login with authorization id alice: %v", err)
			}
			// A name with the characters SCRAM escapes.
			if err := login(t, clientOf(mech, "a=b,c", "other"), m.Start()); err != nil {
				t.Fatalf("login of a=b,c: %v", err)
			}
			// The other mechanism's credential is not this one's.
			other := auth.SCRAMSHA256
			if mech == other {
				other = auth.SCRAMSHA512
			}
			wantInvalid(t, login(t, clientOf(mech, "alice", "secret"), mechanism(t, mech, creds{[2]string{"alice", other}: c[[2]string{"alice", mech}]}).Start()), mech)
		})
	}
}

func TestSCRAMWrongPassword(t *testing.T) {
	for _, mech := range auth.SCRAMMechanisms {
		c := withUser(t, creds{}, "alice", mech, "secret", 4096)
		x := mechanism(t, mech, c).Start()
		wantInvalid(t, login(t, clientOf(mech, "alice", "Secret"), x), mech)
		if x.Principal() != "" {
			t.Errorf("%s: principal %q after a failure", mech, x.Principal())
		}
		if _, _, err := x.Next([]byte("n,,n=alice,r=abc")); err == nil {
			t.Errorf("%s: a failed exchange went on", mech)
		}
	}
}

// manualClient is a SCRAM client that proves with a given salted password.
type manualClient struct {
	h         func() hash.Hash
	bare, gs2 string
}

func newManual(mech, user string) *manualClient {
	h := sha512.New
	if mech == auth.SCRAMSHA256 {
		h = sha256.New
	}
	return &manualClient{h: h, gs2: "n,,", bare: "n=" + user + ",r=clientnonce"}
}

func (c *manualClient) first() []byte { return []byte(c.gs2 + c.bare) }

func (c *manualClient) mac(key []byte, msg string) []byte {
	m := hmac.New(c.h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// final is client-final for serverFirst, proved with salted; nonce, when
// not "", replaces the server's.
func (c *manualClient) final(serverFirst []byte, salted []byte, nonce string) []byte {
	sf := string(serverFirst)
	if nonce == "" {
		nonce = strings.TrimPrefix(strings.Split(sf, ",")[0], "r=")
	}
	without := "c=" + base64.StdEncoding.EncodeToString([]byte(c.gs2)) + ",r=" + nonce
	clientKey := c.mac(salted, "Client Key")
	d := c.h()
	d.Write(clientKey)
	signature := c.mac(d.Sum(nil), c.bare+","+sf+","+without)
	for i := range signature {
		signature[i] ^= clientKey[i]
	}
	return []byte(without + ",p=" + base64.StdEncoding.EncodeToString(signature))
}

func (c *manualClient) salted(t *testing.T, password string, salt []byte, iterations int) []byte {
	b, err := pbkdf2.Key(c.h, password, salt, iterations, c.h().Size())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// finalRefused runs an exchange of c with m whose client-final is
// final(server-first), and checks it fails as a wrong password does.
func finalRefused(t *testing.T, m auth.Mechanism, c *manualClient, what string, final func(serverFirst []byte) []byte) error {
	t.Helper()
	x := m.Start()
	sf, _, err := x.Next(c.first())
	if err != nil {
		t.Fatal(err)
	}
	_, done, err := x.Next(final(sf))
	if done {
		t.Fatalf("%s admitted", what)
	}
	wantInvalid(t, err, m.Name())
	return err
}

// TestSCRAMWrongProof checks proofs computed from a wrong salted password
// (a wrong salt, a wrong iteration count, the right one's neighbour) are
// refused, and the right salted password's proof accepted.
func TestSCRAMWrongProof(t *testing.T) {
	for _, mech := range auth.SCRAMMechanisms {
		m := mechanism(t, mech, withUser(t, creds{}, "alice", mech, "secret", 4096))
		c := newManual(mech, "alice")
		right := c.salted(t, "secret", salt, 4096)
		x := m.Start()
		sf, _, _ := x.Next(c.first())
		if answer, done, err := x.Next(c.final(sf, right, "")); err != nil || !done || !strings.HasPrefix(string(answer), "v=") {
			t.Fatalf("%s: the right proof: %q %v %v", mech, answer, done, err)
		}
		for name, salted := range map[string][]byte{
			"wrong salt":       c.salted(t, "secret", []byte("another salt"), 4096),
			"wrong iterations": c.salted(t, "secret", salt, 4097),
			"one bit off":      append(append([]byte(nil), right[:len(right)-1]...), right[len(right)-1]^1),
			"empty":            {},
		} {
			err := finalRefused(t, m, c, mech+": a proof from a "+name, func(sf []byte) []byte { return c.final(sf, salted, "") })
			if auth.FailureReason(err) != "wrong proof" {
				t.Errorf("%s %s: reason %q", mech, name, auth.FailureReason(err))
			}
		}
	}
}

// TestSCRAMNonce checks client-final must carry the nonce of its own
// exchange's server-first.
func TestSCRAMNonce(t *testing.T) {
	mech := auth.SCRAMSHA512
	m := mechanism(t, mech, withUser(t, creds{}, "alice", mech, "secret", 4096))
	c := newManual(mech, "alice")
	salted := c.salted(t, "secret", salt, 4096)
	x1 := m.Start()
	sf1, _, _ := x1.Next(c.first())
	final1 := c.final(sf1, salted, "")

	x2 := m.Start()
	sf2, _, _ := x2.Next(c.first())
	if string(sf1) == string(sf2) {
		t.Fatal("two exchanges got the same server nonce")
	}
	_, done, err := x2.Next(final1)
	if done {
		t.Fatal("a replayed client-final admitted")
	}
	wantInvalid(t, err, mech)

	for name, modify := range map[string]func(nonce string) string{
		"appended":             func(n string) string { return n + "x" },
		"client part modified": func(n string) string { return "X" + n[1:] },
		"server part only":     func(n string) string { return n[len("clientnonce"):] },
	} {
		finalRefused(t, m, c, "nonce "+name, func(sf []byte) []byte {
			nonce := strings.TrimPrefix(strings.Split(string(sf), ",")[0], "r=")
			return c.final(sf, salted, modify(nonce))
		})
	}
}

// TestSCRAMNonceRepeatedClientPart checks a client-final whose nonce is
// the client's nonce followed by the combined one, as librdkafka 2.0.2
// (Debian's, under kcat and python3-confluent-kafka) sends it, is
// admitted, as Kafka admits it.
func TestSCRAMNonceRepeatedClientPart(t *testing.T) {
	mech := auth.SCRAMSHA512
	m := mechanism(t, mech, withUser(t, creds{}, "alice", mech, "secret", 4096))
	c := newManual(mech, "alice")
	salted := c.salted(t, "secret", salt, 4096)
	x := m.Start()
	sf, _, err := x.Next(c.first())
	if err != nil {
		t.Fatal(err)
	}
	nonce := strings.TrimPrefix(strings.Split(string(sf), ",")[0], "r=")
	_, done, err := x.Next(c.final(sf, salted, "clientnonce"+nonce))
	if err != nil || !done {
		t.Fatalf("librdkafka's client-final: done %v, err %v (%s)", done, err, auth.FailureReason(err))
	}
	if x.Principal() != "User:alice" {
		t.Fatalf("principal %q", x.Principal())
	}
}

func TestSCRAMBadTokens(t *testing.T) {
	mech := auth.SCRAMSHA256
	m := mechanism(t, mech, withUser(t, creds{}, "alice", mech, "secret", 4096))
	firsts := map[string]string{
		"empty":              "",
		"truncated":          "n,,n=alice",
		"no gs2 header":      "n=alice,r=abc",
		"channel binding":    "p=tls-unique,,n=alice,r=abc",
		"client supports cb": "y,,n=alice,r=abc",
		"mandatory ext":      "n,,m=x,n=alice,r=abc",
		"empty user":         "n,,n=,r=abc",
		"bad escape":         "n,,n=al=ice,r=abc",
		"empty nonce":        "n,,n=alice,r=",
		"non-ASCII":          "n,,n=al\xc3\xa9ce,r=abc",
		"non-UTF8":           "n,,n=al\xffce,r=abc",
		"NUL":                "n,,n=al\x00ce,r=abc",
		"oversized":          "n,,n=alice,r=" + strings.Repeat("a", 5000),
		"bad extension":      "n,,n=alice,r=abc,=1",
	}
	for name, tok := range firsts {
		_, done, err := m.Start().Next([]byte(tok))
		if done {
			t.Fatalf("%s admitted", name)
		}
		wantInvalid(t, err, mech)
	}
	_, _, err := m.Start().Next([]byte("n,a=bob,n=alice,r=abc"))
	if want := "Authentication failed: Client requested an authorization id that is different from username"; err == nil || err.Error() != want {
		t.Errorf("authzid: %v, want %q", err, want)
	}
	if _, _, err := m.Start().Next([]byte("n,a=alice,n=alice,r=abc,ext=1")); err != nil {
		t.Errorf("the user's own authorization id and an extension: %v", err)
	}

	c := newManual(mech, "alice")
	salted := c.salted(t, "secret", salt, 4096)
	finals := map[string]func(good string) string{
		"empty":           func(string) string { return "" },
		"truncated":       func(g string) string { return g[:len(g)-10] },
		"no proof":        func(g string) string { return g[:strings.Index(g, ",p=")] },
		"oversized":       func(g string) string { return g + strings.Repeat("A", 5000) },
		"non-UTF8":        func(g string) string { return strings.Replace(g, "c=", "c=\xff", 1) },
		"channel binding": func(g string) string { return strings.Replace(g, "c=biws", "c=eSws", 1) },
		"proof base64":    func(g string) string { return g[:len(g)-2] + "!!" },
	}
	for name, bad := range finals {
		finalRefused(t, m, c, "client-final "+name, func(sf []byte) []byte {
			return []byte(bad(string(c.final(sf, salted, ""))))
		})
	}
}

// TestSCRAMUnknownUser checks an unknown user is answered as a known one
// with a wrong password: a server-first, the same at each attempt, then
// the same failure.
func TestSCRAMUnknownUser(t *testing.T) {
	mech := auth.SCRAMSHA512
	m := mechanism(t, mech, withUser(t, creds{}, "alice", mech, "secret", 4096))
	c := newManual(mech, "mallory")
	var salts []string
	for range 2 {
		x := m.Start()
		sf, done, err := x.Next(c.first())
		if err != nil || done {
			t.Fatalf("client-first of an unknown user: %q %v %v", sf, done, err)
		}
		fields := strings.Split(string(sf), ",")
		if len(fields) != 3 || fields[2] != "i=4096" {
			t.Fatalf("server-first %q", sf)
		}
		salts = append(salts, fields[1])
		_, done, err = x.Next(c.final(sf, c.salted(t, "secret", salt, 4096), ""))
		if done {
			t.Fatal("an unknown user admitted")
		}
		wantInvalid(t, err, mech)
		if auth.FailureReason(err) != "unknown user" {
			t.Errorf("reason %q", auth.FailureReason(err))
		}
	}
	if salts[0] != salts[1] {
		t.Errorf("an unknown user's salt changes: %v", salts)
	}
}

func TestNewSCRAMCredentialIterations(t *testing.T) {
	for _, it := range []int32{0, 4095, 16385} {
		if _, err := auth.NewSCRAMCredential(auth.SCRAMSHA256, "pw", nil, it); !errors.Is(err, auth.ErrUnacceptableCredential) {
			t.Errorf("iterations %d: %v", it, err)
		}
		if _, err := auth.SaltedSCRAMCredential(auth.SCRAMSHA256, salt, []byte("x"), it); !errors.Is(err, auth.ErrUnacceptableCredential) {
			t.Errorf("salted, iterations %d: %v", it, err)
		}
	}
	if _, err := auth.SaltedSCRAMCredential(auth.SCRAMSHA512, nil, []byte("x"), 4096); !errors.Is(err, auth.ErrUnacceptableCredential) {
		t.Errorf("empty salt: %v", err)
	}
	if _, err := auth.NewSCRAMCredential("SCRAM-SHA-1", "pw", nil, 4096); !errors.Is(err, auth.ErrUnknownMechanism) {
		t.Errorf("SCRAM-SHA-1: %v", err)
	}
	// A credential with too few iterations found in the metadata is
	// refused too.
	weak := creds{{"alice", auth.SCRAMSHA256}: {Salt: salt, StoredKey: []byte("k"), ServerKey: []byte("k"), Iterations: 1}}
	_, _, err := mechanism(t, auth.SCRAMSHA256, weak).Start().Next([]byte("n,,n=alice,r=abc"))
	wantInvalid(t, err, auth.SCRAMSHA256)
}

// BenchmarkSCRAMServer is the server's side of one SCRAM-SHA-512 login
// (both steps, the client's proof made from a salted password computed
// once), for a known user and for an unknown one.
func BenchmarkSCRAMServer(b *testing.B) {
	mech := auth.SCRAMSHA512
	cred, err := auth.NewSCRAMCredential(mech, "secret", salt, 4096)
	if err != nil {
		b.Fatal(err)
	}
	m, _ := auth.Mechanisms([]string{mech}, creds{{"alice", mech}: cred}, nil)
	for _, user := range []string{"alice", "mallory"} {
		b.Run(user, func(b *testing.B) {
			c := newManual(mech, user)
			salted, _ := pbkdf2.Key(c.h, "secret", salt, 4096, c.h().Size())
			for b.Loop() {
				x := m[0].Start()
				sf, _, _ := x.Next(c.first())
				if _, done, _ := x.Next(c.final(sf, salted, "")); done != (user == "alice") {
					b.Fatal("unexpected outcome")
				}
			}
		})
	}
}

// BenchmarkPLAIN is one PLAIN login checked against a SCRAM-SHA-512
// credential of 4096 iterations, and one of an unknown user.
func BenchmarkPLAIN(b *testing.B) {
	cred, _ := auth.NewSCRAMCredential(auth.SCRAMSHA512, "secret", salt, 4096)
	m, _ := auth.Mechanisms([]string{auth.PLAIN}, creds{{"alice", auth.SCRAMSHA512}: cred}, nil)
	for _, user := range []string{"alice", "mallory"} {
		b.Run(user, func(b *testing.B) {
			for b.Loop() {
				m[0].Start().Next([]byte("\x00" + user + "\x00secret"))
			}
		})
	}
}

// FuzzSCRAMExchange: whatever a client sends as client-first and
// client-final, an exchange never panics, answers at most a bounded
// server-first, fails with ErrAuthenticationFailed, and never admits a
// client that does not know the password (the seeds include one that
// does, to reach the proof check).
func FuzzSCRAMExchange(f *testing.F) {
	mech := auth.SCRAMSHA256
	cred, err := auth.NewSCRAMCredential(mech, "secret", salt, 4096)
	if err != nil {
		f.Fatal(err)
	}
	ms, _ := auth.Mechanisms([]string{mech}, creds{{"alice", mech}: cred}, nil)
	c := newManual(mech, "alice")
	f.Add(c.first(), []byte("c=biws,r=clientnonce,p=AAAA"))
	f.Add([]byte("n,a=alice,n=alice,r=x,tokenauth=false"), []byte("c=bixhPWFsaWNlLA==,r=x,p="))
	f.Add([]byte("n,,n=mallory,r=abc"), []byte{0xff, 0, ','})
	f.Fuzz(func(t *testing.T, first, final []byte) {
		x := ms[0].Start()
		sf, done, err := x.Next(first)
		if done || (err != nil) == (sf != nil) || len(sf) > 8192 {
			t.Fatalf("client-first %q: %q %v %v", first, sf, done, err)
		}
		if err == nil {
			_, done, err = x.Next(final)
		}
		if done || !errors.Is(err, auth.ErrAuthenticationFailed) {
			t.Fatalf("client-final %q after %q: done %v, err %v", final, first, done, err)
		}
	})
}

// tokens is a CredentialSource with delegation tokens by id.
type tokens struct {
	creds
	byID map[string]auth.DelegationToken
}

func (s tokens) DelegationToken(id string) (auth.DelegationToken, bool) {
	tok, ok := s.byID[id]
	return tok, ok
}

// TestSCRAMDelegationToken checks a SCRAM exchange with the tokenauth
// extension (KIP-48): the token id and its base64 HMAC log in as the
// token's owner until the token's expiry; a wrong HMAC, an unknown token
// and a user's own password are refused as a wrong password is, and a
// token id without the extension is a user name.
func TestSCRAMDelegationToken(t *testing.T) {
	expiry := time.Now().Add(time.Hour)
	secret := auth.DelegationTokenHMAC("key", "tok1")
	src := tokens{creds: withUser(t, creds{}, "alice", auth.SCRAMSHA512, "alice-secret", 4096),
		byID: map[string]auth.DelegationToken{"tok1": {Owner: "alice", HMAC: secret, Expiry: expiry}}}
	tokenAuth := func(id string, hmac []byte) scram.Auth {
		return scram.Auth{User: id, Pass: base64.StdEncoding.EncodeToString(hmac), IsToken: true}
	}
	for _, mech := range auth.SCRAMMechanisms {
		m := mechanism(t, mech, src)
		x := m.Start()
		if err := login(t, clientOf(mech, "", "", tokenAuth("tok1", secret)), x); err != nil {
			t.Fatalf("%s token login: %v", mech, err)
		}
		// Again, with the credential the first login derived.
		if err := login(t, clientOf(mech, "", "", tokenAuth("tok1", secret)), m.Start()); err != nil {
			t.Fatalf("%s second token login: %v", mech, err)
		}
		tx, ok := x.(interface{ TokenAuthenticated() bool })
		if x.Principal() != "User:alice" || !x.Expiry().Equal(expiry) || !ok || !tx.TokenAuthenticated() {
			t.Errorf("%s token login: principal %q, expiry %v, token-authenticated %v", mech, x.Principal(), x.Expiry(), ok && tx.TokenAuthenticated())
		}
		for name, a := range map[string]scram.Auth{
			"wrong HMAC":                tokenAuth("tok1", auth.DelegationTokenHMAC("other key", "tok1")),
			"unknown token":             tokenAuth("tok2", secret),
			"a user's password":         {User: "alice", Pass: "alice-secret", IsToken: true},
			"a token without tokenauth": {User: "tok1", Pass: base64.StdEncoding.EncodeToString(secret)},
		} {
			x := m.Start()
			wantInvalid(t, login(t, clientOf(mech, "", "", a), x), mech)
			if x.Principal() != "" || !x.Expiry().IsZero() {
				t.Errorf("%s %s: failed exchange has principal %q, expiry %v", mech, name, x.Principal(), x.Expiry())
			}
		}
	}
	x := mechanism(t, auth.SCRAMSHA512, src).Start()
	if err := login(t, clientOf(auth.SCRAMSHA512, "alice", "alice-secret"), x); err != nil || !x.Expiry().IsZero() {
		t.Errorf("user login: %v, expiry %v", err, x.Expiry())
	}
}
