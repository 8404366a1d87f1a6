//go:build !linux && !darwin

package vfs

import "errors"

// Space is not known on this platform.
func Space(string) (total, usable int64, err error) {
	return 0, 0, errors.ErrUnsupported
}
