package controller

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/config"
)

// tokenConfig is testConfig with delegation tokens enabled.
func tokenConfig(t *testing.T, dir string) Config {
	b, err := config.ParseBroker(map[string]string{"delegation.token.secret.key": "secret"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, dir)
	cfg.Broker = b
	return cfg
}

// TestDelegationTokensRestart checks tokens, their renewals and their
// removals survive a restart, from the Raft log and from a snapshot, and
// that their HMAC is found again from the secret key alone.
func TestDelegationTokensRestart(t *testing.T) {
	for _, snapshot := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshot=%v", snapshot), func(t *testing.T) {
			dir := t.TempDir()
			ctx := ctxT(t)
			c := start(t, tokenConfig(t, dir))
			now := time.Now()
			kept, keptHMAC, err := c.CreateDelegationToken(ctx, NewDelegationToken{Owner: "User:alice", Requester: "User:admin", Renewers: []string{"User:bob"}}, now)
			if err != nil {
				t.Fatal(err)
			}
			_, goneHMAC, err := c.CreateDelegationToken(ctx, NewDelegationToken{Owner: "User:bob", Requester: "User:bob"}, now)
			if err != nil {
				t.Fatal(err)
			}
			expiry, err := c.RenewDelegationToken(ctx, keptHMAC, "User:bob", 1000, now)
			if err != nil || expiry != now.UnixMilli()+1000 {
				t.Fatalf("renew: %d, %v", expiry, err)
			}
			if _, err := c.ExpireDelegationToken(ctx, goneHMAC, "User:bob", -1, now); err != nil {
				t.Fatal(err)
			}
			if snapshot {
				if err := c.raft.Snapshot().Error(); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c2 := start(t, tokenConfig(t, dir))
			img := c2.Image()
			got, ok := FindDelegationToken(img, "secret", keptHMAC)
			if !ok || got.TokenID != kept.TokenID || got.ExpiryMs != expiry || got.Owner != "User:alice" || got.Renewers[0] != "User:bob" {
				t.Errorf("token after restart: %+v, %v", got, ok)
			}
			if len(img.DelegationTokens) != 1 {
				t.Errorf("tokens after restart: %v", img.DelegationTokens)
			}
			if _, ok := FindDelegationToken(img, "other secret", keptHMAC); ok {
				t.Error("an HMAC matches under another secret key")
			}
		})
	}
}

// TestSweepDelegationTokens checks the active controller removes the
// tokens past their expiry or their maximum lifetime, and only those.
func TestSweepDelegationTokens(t *testing.T) {
	ctx := ctxT(t)
	c := start(t, tokenConfig(t, ""))
	now := time.Now()
	short, _, err := c.CreateDelegationToken(ctx, NewDelegationToken{Owner: "User:a", Requester: "User:a", MaxLifetimeMs: 1000}, now)
	if err != nil {
		t.Fatal(err)
	}
	long, _, err := c.CreateDelegationToken(ctx, NewDelegationToken{Owner: "User:a", Requester: "User:a"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.SweepDelegationTokens(ctx, now.Add(time.Second)); err != nil || n != 0 {
		t.Fatalf("sweep at the maximum lifetime removed %d, %v", n, err)
	}
	if n, err := c.SweepDelegationTokens(ctx, now.Add(time.Second+time.Millisecond)); err != nil || n != 1 {
		t.Fatalf("sweep after the maximum lifetime removed %d, %v", n, err)
	}
	img := c.Image()
	if _, ok := img.DelegationToken(short.TokenID); ok {
		t.Error("the lapsed token is kept")
	}
	if _, ok := img.DelegationToken(long.TokenID); !ok {
		t.Error("the token still valid was removed")
	}
	// 24 hours: delegation.token.expiry.time.ms.
	if n, err := c.SweepDelegationTokens(ctx, now.Add(24*time.Hour+time.Millisecond)); err != nil || n != 1 {
		t.Fatalf("sweep after the expiry removed %d, %v", n, err)
	}
	if _, err := c.RenewDelegationToken(ctx, auth.DelegationTokenHMAC("secret", long.TokenID), "User:a", 0, now); !errors.Is(err, ErrDelegationTokenNotFound) {
		t.Errorf("renew of a removed token: %v", err)
	}
}

// TestDelegationTokensDisabled checks a controller without a secret key
// refuses tokens.
func TestDelegationTokensDisabled(t *testing.T) {
	c := start(t, testConfig(t, ""))
	if _, _, err := c.CreateDelegationToken(ctxT(t), NewDelegationToken{Owner: "User:a", Requester: "User:a"}, time.Now()); !errors.Is(err, ErrDelegationTokenDisabled) {
		t.Errorf("create without a secret key: %v", err)
	}
}
