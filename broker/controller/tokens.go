package controller

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
)

// Delegation tokens (KIP-48), as Kafka's DelegationTokenControlManager:
// created, renewed and expired with records in the metadata log, which
// keeps no HMAC; the active controller removes the tokens that lapsed
// (SweepDelegationTokens). The HMAC is computed with
// delegation.token.secret.key, which every node must share; without one
// tokens are disabled. Times are Unix milliseconds of the caller's now.

// maxSweep bounds the tokens one sweep removes; the next removes the
// rest.
const maxSweep = 1000

// NewDelegationToken is a token to create: its owner and requester, the
// principals who may renew it, and the lifetime asked for (0 or less:
// delegation.token.max.lifetime.ms).
type NewDelegationToken struct {
	Owner, Requester string
	Renewers         []string
	MaxLifetimeMs    int64
}

// tokenSettings are the delegation token configs of the controller.
func (c *Controller) tokenSettings() config.DelegationTokenSettings {
	if c.cfg.Broker == nil {
		return config.DelegationTokenSettings{}
	}
	return c.cfg.Broker.Settings().DelegationToken
}

// CreateDelegationToken creates a token at now and returns it with its
// HMAC: it expires after delegation.token.expiry.time.ms, and lives at
// most the lifetime asked for and delegation.token.max.lifetime.ms.
func (c *Controller) CreateDelegationToken(ctx context.Context, req NewDelegationToken, now time.Time) (metadata.DelegationToken, []byte, error) {
	s := c.tokenSettings()
	if s.SecretKey == "" {
		return metadata.DelegationToken{}, nil, ErrDelegationTokenDisabled
	}
	nowMs := now.UnixMilli()
	maxLife := s.MaxLifetime.Milliseconds()
	if req.MaxLifetimeMs > 0 {
		maxLife = min(maxLife, req.MaxLifetimeMs)
	}
	id, err := metadata.NewTopicID(nil)
	if err != nil {
		return metadata.DelegationToken{}, nil, err
	}
	maxMs := addMs(nowMs, maxLife)
	tok := metadata.DelegationToken{
		TokenID: metadata.UUID(id).String(), Owner: req.Owner, Requester: req.Requester, Renewers: req.Renewers,
		IssueMs: nowMs, MaxMs: maxMs, ExpiryMs: min(maxMs, addMs(nowMs, s.ExpiryTime.Milliseconds())),
	}
	if err := c.proposeToken(ctx, &metadata.DelegationTokenRecord{Create: true, Token: tok}); err != nil {
		return metadata.DelegationToken{}, nil, err
	}
	return tok, auth.DelegationTokenHMAC(s.SecretKey, tok.TokenID), nil
}

// RenewDelegationToken renews the token of hmac for principal at now, by
// periodMs (0 or less: delegation.token.expiry.time.ms, never more), never
// beyond its maximum lifetime, and returns its new expiry.
func (c *Controller) RenewDelegationToken(ctx context.Context, hmac []byte, principal string, periodMs int64, now time.Time) (int64, error) {
	tok, err := c.tokenOf(ctx, hmac)
	if err != nil {
		return 0, err
	}
	nowMs := now.UnixMilli()
	if tok.Expired(nowMs) {
		return 0, fmt.Errorf("%w: %s", ErrDelegationTokenExpired, tok.TokenID)
	}
	if !tok.OwnerOrRenewer(principal) {
		return 0, fmt.Errorf("%w: %s may not renew %s", ErrDelegationTokenOwnerMismatch, principal, tok.TokenID)
	}
	renew := c.tokenSettings().ExpiryTime.Milliseconds()
	if periodMs > 0 {
		renew = min(renew, periodMs)
	}
	tok.ExpiryMs = min(tok.MaxMs, addMs(nowMs, renew))
	return expiryOf(tok.ExpiryMs, c.proposeToken(ctx, &metadata.DelegationTokenRecord{Token: tok}))
}

// ExpireDelegationToken expires the token of hmac for principal at now:
// a negative periodMs removes it at once, otherwise it expires periodMs
// from now (never beyond its maximum lifetime). It returns the new
// expiry.
func (c *Controller) ExpireDelegationToken(ctx context.Context, hmac []byte, principal string, periodMs int64, now time.Time) (int64, error) {
	tok, err := c.tokenOf(ctx, hmac)
	if err != nil {
		return 0, err
	}
	if !tok.OwnerOrRenewer(principal) {
		return 0, fmt.Errorf("%w: %s may not expire %s", ErrDelegationTokenOwnerMismatch, principal, tok.TokenID)
	}
	nowMs := now.UnixMilli()
	switch {
	case periodMs < 0:
		return expiryOf(nowMs, c.proposeToken(ctx, &metadata.RemoveDelegationTokenRecord{TokenID: tok.TokenID}))
	case tok.Expired(nowMs):
		return 0, fmt.Errorf("%w: %s", ErrDelegationTokenExpired, tok.TokenID)
	}
	tok.ExpiryMs = min(tok.MaxMs, addMs(nowMs, periodMs))
	return expiryOf(tok.ExpiryMs, c.proposeToken(ctx, &metadata.DelegationTokenRecord{Token: tok}))
}

// expiryOf is the expiry a renewal or expiry answers: 0 when it failed.
func expiryOf(expiryMs int64, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return expiryMs, nil
}

// tokenOf is the token whose HMAC is hmac, in the image caught up with
// the active controller's.
func (c *Controller) tokenOf(ctx context.Context, hmac []byte) (metadata.DelegationToken, error) {
	secret := c.tokenSettings().SecretKey
	if secret == "" {
		return metadata.DelegationToken{}, ErrDelegationTokenDisabled
	}
	if err := c.CatchUp(ctx); err != nil {
		return metadata.DelegationToken{}, err
	}
	if tok, ok := FindDelegationToken(c.Image(), secret, hmac); ok {
		return tok, nil
	}
	return metadata.DelegationToken{}, ErrDelegationTokenNotFound
}

// FindDelegationToken is the token of img whose HMAC under secret is
// hmac.
func FindDelegationToken(img *metadata.Image, secret string, hmac []byte) (metadata.DelegationToken, bool) {
	for _, tok := range img.DelegationTokens {
		if auth.EqualHMAC(auth.DelegationTokenHMAC(secret, tok.TokenID), hmac) {
			return tok, true
		}
	}
	return metadata.DelegationToken{}, false
}

// proposeToken commits a token's record; a token removed meanwhile is
// ErrDelegationTokenNotFound.
func (c *Controller) proposeToken(ctx context.Context, rec metadata.Record) error {
	res, err := c.propose(ctx, rec)
	if err == nil {
		err = res.err
	}
	if errors.Is(err, metadata.ErrUnknownDelegationToken) {
		return fmt.Errorf("%w: %w", ErrDelegationTokenNotFound, err)
	}
	if err == nil {
		c.spread(ctx)
	}
	return err
}

// SweepDelegationTokens removes, on the active controller, the tokens
// that lapsed by now (at most maxSweep of them), as Kafka's controller
// does every delegation.token.expiry.check.interval.ms, and returns how
// many it removed. Elsewhere it does nothing.
func (c *Controller) SweepDelegationTokens(ctx context.Context, now time.Time) (int, error) {
	if !c.IsLeader() {
		return 0, nil
	}
	nowMs := now.UnixMilli()
	removed := 0
	for _, tok := range c.Image().SortedDelegationTokens() {
		if removed == maxSweep {
			break
		}
		if !tok.Expired(nowMs) {
			continue
		}
		if err := c.proposeToken(ctx, &metadata.RemoveDelegationTokenRecord{TokenID: tok.TokenID}); err != nil {
			if errors.Is(err, ErrDelegationTokenNotFound) {
				continue // expired by its owner meanwhile
			}
			return removed, err
		}
		c.log.Info("delegation token expired", "token", tok.TokenID, "owner", tok.Owner)
		removed++
	}
	return removed, nil
}

// addMs is now+d, saturating at the largest timestamp.
func addMs(now, d int64) int64 {
	if now > math.MaxInt64-d {
		return math.MaxInt64
	}
	return now + d
}
