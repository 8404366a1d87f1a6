package testkit

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// JWTIssuer is an OAuth issuer of a test: RSA and EC signing keys, the
// JWKS it serves over HTTP, and tokens signed with them, for the
// OAUTHBEARER tests of the broker and of klog's commands.
type JWTIssuer struct {
	// URL is the JWKS endpoint.
	URL string
	// Fetches counts the requests to it.
	Fetches atomic.Int64

	mu   sync.Mutex
	keys map[string]crypto.Signer // by kid, in the JWKS
	// forger signs for the kids the JWKS lacks.
	forger crypto.Signer
}

// NewJWTIssuer starts an issuer serving a JWKS of an RSA key ("rsa-1")
// and a P-256 key ("ec-1"), stopped at the test's end.
func NewJWTIssuer(t testing.TB) *JWTIssuer {
	t.Helper()
	iss := &JWTIssuer{keys: map[string]crypto.Signer{}}
	iss.AddKey(t, "rsa-1", false)
	iss.AddKey(t, "ec-1", true)
	iss.AddKey(t, "forger", false)
	iss.forger = iss.keys["forger"]
	delete(iss.keys, "forger")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss.Fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(iss.JWKS())
	}))
	t.Cleanup(srv.Close)
	iss.URL = srv.URL + "/jwks"
	return iss
}

// AddKey adds a signing key named kid to the JWKS: P-256 when ec, else
// RSA 2048.
func (iss *JWTIssuer) AddKey(t testing.TB, kid string, ec bool) {
	t.Helper()
	var (
		k   crypto.Signer
		err error
	)
	if ec {
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatal(err)
	}
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.keys[kid] = k
}

// JWKS is the key set, as the endpoint serves it.
func (iss *JWTIssuer) JWKS() []byte {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	enc := base64.RawURLEncoding.EncodeToString
	var keys []map[string]string
	for kid, k := range iss.keys {
		switch pub := k.Public().(type) {
		case *rsa.PublicKey:
			keys = append(keys, map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
				"n": enc(pub.N.Bytes()), "e": enc(big.NewInt(int64(pub.E)).Bytes())})
		case *ecdsa.PublicKey:
			b, _ := pub.Bytes()
			keys = append(keys, map[string]string{"kty": "EC", "kid": kid, "use": "sig", "crv": "P-256",
				"x": enc(b[1:33]), "y": enc(b[33:])})
		}
	}
	out, _ := json.Marshal(map[string]any{"keys": keys})
	return out
}

// Sign returns a JWT of claims signed with the key kid (RS256 or ES256
// by its type); a kid the issuer lacks signs with an RSA key of its own
// outside the JWKS, as a forger would.
func (iss *JWTIssuer) Sign(t testing.TB, kid string, claims map[string]any) string {
	t.Helper()
	iss.mu.Lock()
	k, ok := iss.keys[kid]
	if !ok {
		k = iss.forger
	}
	iss.mu.Unlock()
	alg := "RS256"
	if _, ec := k.(*ecdsa.PrivateKey); ec {
		alg = "ES256"
	}
	header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT", "kid": kid})
	body, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	input := enc(header) + "." + enc(body)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := k.(type) {
	case *rsa.PrivateKey:
		s, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = s
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	return input + "." + enc(sig)
}
