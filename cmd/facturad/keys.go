package main

import (
	"context"
	"fmt"

	"facturad/tenant"
	"facturad/tenant/seal"
)

// Names (and HKDF labels) of the keys derived from the master key. They are
// part of the stored format: a key is stored under its label the first
// time and read back from the store ever after (see tenant.DerivedKey).
const (
	labelAuthKey     = "facturad auth cache v1"
	labelCredKey     = "facturad generated credentials v1"
	labelCallbackKey = "facturad hacienda callbacks v1"
	labelListKey     = "facturad list cursors v1"
)

// openKeys makes the sealer (the master key, and master_key_previous during
// a rotation) and loads the keys derived from the master key.
//
// Those keys must not change when the master key does: generated API
// passwords are stored as HMACs under the credential key, so a new
// credential key would lock out every API user. They are therefore
// derived once, stored sealed, and opened from the store at every start.
// A deployment that predates the stored keys derived them from the key it
// ran with: that is master_key_previous when a rotation is under way, else
// master_key.
func (w *wiring) openKeys(ctx context.Context, masterKey []byte) error {
	var previous [][]byte
	root := masterKey
	if w.c.MasterKeyPrevious != "" {
		p, err := seal.ParseMasterKey(w.c.MasterKeyPrevious)
		if err != nil {
			return fmt.Errorf("%s: %w", w.c.name("master_key_previous"), err)
		}
		previous = append(previous, p)
		root = p
	}
	var err error
	if w.sealer, err = seal.NewWithPrevious(masterKey, previous...); err != nil {
		return fmt.Errorf("sealer: %w", err)
	}
	for _, k := range []struct {
		label string
		into  *[]byte
	}{
		// Seals the credential cache's entries.
		{labelAuthKey, &w.authKey},
		// Generated API passwords are stored under this key: the same
		// key must open them on every replica, after every restart and
		// every master-key rotation.
		{labelCredKey, &w.credKey},
		// The same on every replica, so any of them takes any callback.
		{labelCallbackKey, &w.callbackKey},
		// The same on every replica, so any of them takes a cursor
		// another one made.
		{labelListKey, &w.listKey},
	} {
		v, err := tenant.DerivedKey(ctx, w.store, w.sealer, k.label, func() ([]byte, error) {
			return seal.DeriveKey(root, k.label)
		})
		if err != nil {
			return fmt.Errorf("derived keys: %w", err)
		}
		*k.into = v
	}
	return nil
}
