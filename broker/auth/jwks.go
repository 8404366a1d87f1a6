package auth

// The JWKS validator, Kafka's OAuthBearerValidatorCallbackHandler: the
// token is a JWT signed (RS256/384/512, PS256/384/512, ES256/384/512) by
// a key of the issuer's JSON Web Key Set, sasl.oauthbearer.jwks.endpoint.url
// (http, https or a file:// path). Its claims are checked as Kafka's
// JwtConsumer does:
//
//   - exp and iat required; exp not passed and nbf, when present,
//     reached, with sasl.oauthbearer.clock.skew.seconds allowed;
//   - aud holding one of sasl.oauthbearer.expected.audience when that is
//     set; when it is not, a token with an aud is refused (Kafka's
//     "no expected audience value(s) were provided");
//   - iss equal to sasl.oauthbearer.expected.issuer when that is set;
//   - sasl.oauthbearer.sub.claim.name (sub) a non-blank string, the
//     principal; sasl.oauthbearer.scope.claim.name (scope) a string or a
//     list without blanks or duplicates.
//
// The keys are fetched when first needed and again once
// sasl.oauthbearer.jwks.endpoint.refresh.ms old, and when a token names a
// key (kid) the set lacks; the fetches are bounded (keyFetchTimeout,
// maxJWKSBytes, maxJWKSKeys) and rate limited: at most one per
// min(refresh.ms, keyRefreshLimit), and per keyRefreshFloor, whatever the
// tokens ask, one at a time. A failed fetch keeps the keys already held. Kafka reads a file
// once at start; klog reads it at start (a bad file fails the start)
// and again as it fetches a URL.

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds of a JWKS fetch.
const (
	keyFetchTimeout = 10 * time.Second
	maxJWKSBytes    = 1 << 20
	maxJWKSKeys     = 100
	// keyRefreshLimit and keyRefreshFloor bound the time between two
	// fetches that tokens ask for (an unknown kid, keys due a refresh):
	// min(refresh.ms, keyRefreshLimit), never under keyRefreshFloor.
	keyRefreshLimit = 10 * time.Second
	keyRefreshFloor = time.Second
	// minRSABits is the smallest RSA key klog verifies with, as Kafka's
	// JOSE library.
	minRSABits = 2048
)

type jwksValidator struct {
	keys                 *keySet
	audience             []string
	issuer               string
	subClaim, scopeClaim string
	skew                 time.Duration
}

func (v *jwksValidator) validate(token string, now time.Time) (oauthToken, *tokenError) {
	t, err := parseJWS(token)
	if err != nil {
		return oauthToken{}, invalidToken("%v", err)
	}
	alg, _, err := t.header.str("alg")
	if err != nil || signatureHash(alg) == 0 {
		return oauthToken{}, invalidToken("signature algorithm %q: klog verifies RS256/384/512, PS256/384/512 and ES256/384/512", alg)
	}
	kid, _, err := t.header.str("kid")
	if err != nil {
		return oauthToken{}, invalidToken("%v", err)
	}
	keys, err := v.keys.lookup(kid, alg, now)
	if err != nil {
		return oauthToken{}, invalidToken("%v", err)
	}
	if !slices.ContainsFunc(keys, func(k jwk) bool { return verifySignature(alg, k.key, t.signingInput, t.signature) }) {
		return oauthToken{}, invalidToken("the signature does not verify with the key set's key %q", kid)
	}
	if err := v.checkClaims(t.claims, now); err != nil {
		return oauthToken{}, invalidToken("%v", err)
	}
	exp, _, _ := t.claims.number("exp")
	sub, _, _ := t.claims.str(v.subClaim)
	return oauthToken{principal: strings.TrimSpace(sub), expiry: numericDate(exp)}, nil
}

// checkClaims checks a verified token's claims at now.
func (v *jwksValidator) checkClaims(c jsonClaims, now time.Time) error {
	exp, ok, err := c.number("exp")
	if err != nil || !ok {
		return errors.New("no expiration time (exp) claim")
	}
	if _, ok, err := c.number("iat"); err != nil || !ok {
		return errors.New("no issued at (iat) claim")
	}
	if err := checkExpiry(now, numericDate(exp), v.skew); err != nil {
		return err
	}
	if nbf, ok, err := c.number("nbf"); err != nil || ok && now.Add(v.skew).Before(numericDate(nbf)) {
		return errors.New("not yet valid (nbf)")
	}
	aud, hasAud, err := c.strings("aud")
	switch {
	case err != nil:
		return err
	case len(v.audience) == 0 && hasAud:
		return fmt.Errorf("audience %v, and no expected audience is set (sasl.oauthbearer.expected.audience)", aud)
	case len(v.audience) > 0 && !slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(v.audience, a) }):
		return fmt.Errorf("audience %v holds none of the expected %v", aud, v.audience)
	}
	if v.issuer != "" {
		if iss, _, err := c.str("iss"); err != nil || iss != v.issuer {
			return fmt.Errorf("issuer %q is not the expected %q", iss, v.issuer)
		}
	}
	scope, _, err := c.strings(v.scopeClaim)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, s := range scope {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			return fmt.Errorf("the %s claim has a blank or repeated scope", v.scopeClaim)
		}
		seen[s] = true
	}
	if sub, _, err := c.str(v.subClaim); err != nil || strings.TrimSpace(sub) == "" {
		return fmt.Errorf("no principal in the %s claim", v.subClaim)
	}
	return nil
}

// signatureHash is the hash of a JWS algorithm klog verifies, 0 for
// another.
func signatureHash(alg string) crypto.Hash {
	switch alg {
	case "RS256", "PS256", "ES256":
		return crypto.SHA256
	case "RS384", "PS384", "ES384":
		return crypto.SHA384
	case "RS512", "PS512", "ES512":
		return crypto.SHA512
	}
	return 0
}

// verifySignature reports whether sig is alg's signature of input by key.
func verifySignature(alg string, key crypto.PublicKey, input string, sig []byte) bool {
	h := signatureHash(alg)
	var digest []byte
	switch h {
	case crypto.SHA256:
		d := sha256.Sum256([]byte(input))
		digest = d[:]
	case crypto.SHA384:
		d := sha512.Sum384([]byte(input))
		digest = d[:]
	case crypto.SHA512:
		d := sha512.Sum512([]byte(input))
		digest = d[:]
	default:
		return false
	}
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch alg[:2] {
		case "RS":
			return rsa.VerifyPKCS1v15(k, h, digest, sig) == nil
		case "PS":
			return rsa.VerifyPSS(k, h, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil
		}
	case *ecdsa.PublicKey:
		size := (k.Curve.Params().BitSize + 7) / 8
		if alg[:2] != "ES" || curveOf(alg) != k.Curve || len(sig) != 2*size {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		return ecdsa.Verify(k, digest, r, s)
	}
	return false
}

// curveOf is the curve of an ES algorithm.
func curveOf(alg string) elliptic.Curve {
	switch alg {
	case "ES256":
		return elliptic.P256()
	case "ES384":
		return elliptic.P384()
	case "ES512":
		return elliptic.P521()
	}
	return nil
}

// jwk is a verification key of a key set.
type jwk struct {
	kid, alg string
	key      crypto.PublicKey
}

// fits reports whether k may verify a token of alg naming kid.
func (k jwk) fits(kid, alg string) bool {
	if kid != "" && k.kid != kid || k.alg != "" && k.alg != alg {
		return false
	}
	switch k.key.(type) {
	case *rsa.PublicKey:
		return alg[0] == 'R' || alg[0] == 'P'
	case *ecdsa.PublicKey:
		return alg[0] == 'E'
	}
	return false
}

// keySet is the key set of a JWKS endpoint or file, fetched as the
// file's doc says.
type keySet struct {
	url     string // http(s)
	path    string // file
	refresh time.Duration
	client  *http.Client
	// fetching is held by the one fetch under way.
	fetching sync.Mutex
	mu       struct {
		sync.Mutex
		keys    []jwk
		fetched time.Time // the keys', zero before the first
		tried   time.Time // the last fetch's start
		err     error     // the last fetch's error, nil once one worked
	}
}

// newKeySet makes the key set of a JWKS location: an http or https URL,
// or a file:// URL whose file is read now.
func newKeySet(location string, refresh time.Duration) (*keySet, error) {
	u, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url: %v", err)
	}
	ks := &keySet{refresh: refresh}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		ks.url = location
		ks.client = &http.Client{Timeout: keyFetchTimeout}
		return ks, nil
	case "file":
		ks.path = u.Path
		if ks.path == "" {
			ks.path = u.Opaque
		}
		if err := ks.fetch(time.Now()); err != nil {
			return nil, err
		}
		return ks, nil
	}
	return nil, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url %q: want an http, https or file URL", location)
}

// lookup returns the keys that may verify a token of alg naming kid (any
// key of alg when kid is empty), fetching the set when it must and may.
func (ks *keySet) lookup(kid, alg string, now time.Time) ([]jwk, error) {
	keys, fetched, err := ks.current()
	due := fetched.IsZero() || now.Sub(fetched) >= ks.refresh
	match := fitting(keys, kid, alg)
	if due || len(match) == 0 {
		if ks.refreshKeys(now, fetched.IsZero()) {
			keys, _, err = ks.current()
			match = fitting(keys, kid, alg)
		}
	}
	if len(match) == 0 {
		if len(keys) == 0 && err != nil {
			return nil, fmt.Errorf("no keys: %v", err)
		}
		return nil, fmt.Errorf("the key set has no key %q for %s", kid, alg)
	}
	return match, nil
}

func fitting(keys []jwk, kid, alg string) []jwk {
	var out []jwk
	for _, k := range keys {
		if k.fits(kid, alg) {
			out = append(out, k)
		}
	}
	return out
}

func (ks *keySet) current() ([]jwk, time.Time, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.mu.keys, ks.mu.fetched, ks.mu.err
}

// refreshKeys fetches the set unless a fetch is under way or began less
// than the rate limit ago; with wait, it waits for a fetch under way (a
// set never fetched has nothing to answer with meanwhile). It reports
// whether the keys may have changed.
func (ks *keySet) refreshKeys(now time.Time, wait bool) bool {
	if wait {
		ks.fetching.Lock()
	} else if !ks.fetching.TryLock() {
		return false
	}
	defer ks.fetching.Unlock()
	ks.mu.Lock()
	tried := ks.mu.tried
	ks.mu.Unlock()
	if !tried.IsZero() && now.Sub(tried) < max(min(ks.refresh, keyRefreshLimit), keyRefreshFloor) {
		return wait
	}
	ks.fetch(now)
	return true
}

// fetch reads the set and keeps its keys; it keeps the keys it had when
// that fails.
func (ks *keySet) fetch(now time.Time) error {
	keys, err := ks.read()
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.mu.tried, ks.mu.err = now, err
	if err == nil {
		ks.mu.keys, ks.mu.fetched = keys, now
	}
	return err
}

// read reads and parses the set.
func (ks *keySet) read() ([]jwk, error) {
	var body []byte
	var err error
	if ks.path != "" {
		body, err = readBounded(ks.path)
	} else {
		body, err = ks.get()
	}
	if err != nil {
		return nil, err
	}
	return parseJWKS(body)
}

// get fetches the set from its URL, bounded in time and size.
func (ks *keySet) get() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), keyFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("JWKS %s: %w", ks.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("JWKS %s: HTTP %s", ks.url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("JWKS %s: %w", ks.url, err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("JWKS %s: over %d bytes", ks.url, maxJWKSBytes)
	}
	return body, nil
}

// readBounded reads a JWKS file of at most maxJWKSBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("JWKS file: %w", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, maxJWKSBytes+1))
	if err == nil && len(body) > maxJWKSBytes {
		err = fmt.Errorf("over %d bytes", maxJWKSBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("JWKS file %s: %w", path, err)
	}
	return body, nil
}

// jwkJSON is a JSON Web Key's members klog reads (RFC 7517, 7518).
type jwkJSON struct {
	Kty, Kid, Alg, Use, Crv string
	N, E, X, Y              string
}

// parseJWKS reads a JWK Set's verification keys: RSA keys of at least
// minRSABits and EC keys on P-256, P-384 or P-521, not marked for
// encryption; other keys are passed over. A set with none is an error.
func parseJWKS(body []byte) ([]jwk, error) {
	var set struct {
		Keys []jwkJSON `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("JWKS: not a JSON Web Key Set: %v", err)
	}
	var out []jwk
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		key, err := k.publicKey()
		if err != nil {
			continue
		}
		out = append(out, jwk{kid: k.Kid, alg: k.Alg, key: key})
		if len(out) == maxJWKSKeys {
			break
		}
	}
	if len(out) == 0 {
		return nil, errors.New("JWKS: no RSA or EC verification key")
	}
	return out, nil
}

// publicKey is the key a JWK describes.
func (k jwkJSON) publicKey() (crypto.PublicKey, error) {
	num := func(s string) (*big.Int, error) {
		b, err := decodeBase64URL(s)
		if err != nil || len(b) == 0 {
			return nil, errors.New("malformed key")
		}
		return new(big.Int).SetBytes(b), nil
	}
	switch k.Kty {
	case "RSA":
		n, err := num(k.N)
		if err != nil {
			return nil, err
		}
		e, err := num(k.E)
		if err != nil || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || n.BitLen() < minRSABits {
			return nil, errors.New("unusable RSA key")
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, errors.New("unknown curve")
		}
		x, err := num(k.X)
		if err != nil {
			return nil, err
		}
		y, err := num(k.Y)
		if err != nil {
			return nil, err
		}
		size := (curve.Params().BitSize + 7) / 8
		if x.BitLen() > 8*size || y.BitLen() > 8*size {
			return nil, errors.New("malformed EC key")
		}
		point := append([]byte{4}, append(x.FillBytes(make([]byte, size)), y.FillBytes(make([]byte, size))...)...)
		return ecdsa.ParseUncompressedPublicKey(curve, point)
	}
	return nil, errors.New("unknown key type")
}
