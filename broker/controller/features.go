package controller

import (
	"context"
	"fmt"

	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
)

// UpgradeType is how an UpdateFeatures may move a feature's level, as
// Kafka's FeatureUpdate.UpgradeType: a request at version 0 carries none
// and is an upgrade (Kafka's controller reads the field's default, not
// AllowDowngrade).
type UpgradeType int8

// The upgrade types of UpdateFeatures v1+; any other value is refused.
const (
	Upgrade         UpgradeType = 1
	SafeDowngrade   UpgradeType = 2
	UnsafeDowngrade UpgradeType = 3
)

// FeatureUpdate is one feature's part of an UpdateFeatures: the level to
// finalize and how it may move there.
type FeatureUpdate struct {
	Name  string
	Level int16
	Type  UpgradeType
}

// UpdateFeatures checks each update as Kafka's FeatureControlManager
// does and finalizes the new levels together, unless validateOnly. The
// first update that fails fails them all: the error is
// ErrInvalidUpdateVersion with Kafka's message for that feature. A
// feature named twice takes its last update. Only changes are written:
// levels already finalized write nothing. As a topic change, a change is
// spread to the other nodes before it returns.
func (c *Controller) UpdateFeatures(ctx context.Context, updates []FeatureUpdate, validateOnly bool) error {
	if err := c.CatchUp(ctx); err != nil {
		return err
	}
	img := c.Image()
	last := map[string]int{}
	for i, u := range updates {
		last[u.Name] = i
	}
	rec := &metadata.FeatureLevelRecord{}
	for i, u := range updates {
		if last[u.Name] != i {
			continue
		}
		if err := checkFeatureUpdate(img, u); err != nil {
			return err
		}
		if u.Level != img.FeatureLevel(u.Name) {
			rec.Levels = append(rec.Levels, metadata.FeatureLevel{Name: u.Name, Level: u.Level})
		}
	}
	if validateOnly || len(rec.Levels) == 0 {
		return nil
	}
	res, err := c.propose(ctx, rec)
	if err == nil {
		err = res.err
	}
	if err == nil {
		c.spread(ctx)
	}
	return err
}

// checkFeatureUpdate checks one update against img, in the order and with
// the messages of Kafka's FeatureControlManager.updateFeature; the node
// named in them is the active controller, the one Kafka's are from.
func checkFeatureUpdate(img *metadata.Image, u FeatureUpdate) error {
	invalid := func(reason string) error {
		return errmsg.Withf(fmt.Errorf("%w: feature %s level %d: %s", ErrInvalidUpdateVersion, u.Name, u.Level, reason),
			"Invalid update version %d for feature %s. %s", u.Level, u.Name, reason)
	}
	if u.Type < Upgrade || u.Type > UnsafeDowngrade {
		return invalid("The controller does not support the given upgrade type.")
	}
	if u.Level < 0 {
		return invalid("A feature version cannot be less than 0.")
	}
	f, known := metadata.FeatureByName(u.Name)
	local := fmt.Sprintf("Local controller %d", img.Controller)
	switch {
	case !known && u.Level > 0, known && f.Max == 0 && u.Level > 0:
		return invalid(local + " does not support this feature.")
	case known && (u.Level < f.Min || u.Level > f.Max):
		return invalid(fmt.Sprintf("%s only supports versions %d-%d", local, f.Min, f.Max))
	}
	current := img.FeatureLevel(u.Name)
	switch {
	case u.Level < current && u.Type == Upgrade:
		return invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
	case u.Level > current && u.Type != Upgrade:
		return invalid("Can't downgrade to a newer version.")
	case !known:
		return invalid(fmt.Sprintf("Feature %s not found.", u.Name))
	case u.Level >= current:
		return nil
	case u.Name == metadata.MetadataVersion:
		reason := "Refusing to perform the requested downgrade because it might delete metadata information."
		if u.Type == UnsafeDowngrade {
			reason = "Unsafe metadata downgrade is not supported in this version."
		}
		return errmsg.Withf(fmt.Errorf("%w: metadata.version downgrade from %d to %d", ErrInvalidUpdateVersion, current, u.Level),
			"Unsupported metadata.version downgrade from %d to %d. %s", current, u.Level, reason)
	case f.Fixed != "":
		return invalid(f.Fixed)
	}
	return nil
}
