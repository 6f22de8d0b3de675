package main

import (
	"context"
	"fmt"
	"io"

	"facturad/tenant"
)

// runRekey re-wraps every sealed value still under master_key_previous
// with master_key, while the service keeps running (see tenant.Rekey). It
// is safe to stop and run again: what is done is skipped.
//
// It changes only what exists: both keys must be given (it never reads
// or creates master.key), the embedded store must already be there, no
// migration runs, and a store holding neither a company nor a stored key
// (the wrong data_dir or database) is refused rather than reported done.
func runRekey(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) (err error) {
	c, err := loadConfig("rekey", args, stdout, stderr, getenv)
	if err != nil {
		return err
	}
	if c.MasterKeyPrevious == "" {
		return fmt.Errorf("rekey: %s is not set: set %s to the new key and %[1]s to the one being replaced (docs/operations.md, \"Rotate the master key\")", c.name("master_key_previous"), c.name("master_key"))
	}
	if c.MasterKey == "" {
		return fmt.Errorf("rekey: %s is not set: set it to the new key explicitly; rekey never reads or creates master.key (docs/operations.md, \"Rotate the master key\")", c.name("master_key"))
	}
	c.Migrate = false // a rotation changes sealed values, never the schema
	if c.DatabaseURL == "" {
		if err := requireEmbeddedStore(c); err != nil {
			return fmt.Errorf("rekey: %w", err)
		}
	}
	log := newLogger(stderr, c.LogLevel)
	var stop cleanups
	stop.log = log
	defer stop.run(context.Background())
	w := &wiring{c: c, log: log, stop: &stop}
	store, masterKey, err := openStore(ctx, c, &stop)
	if err != nil {
		return fmt.Errorf("rekey: %w", err)
	}
	w.store = store
	if err := requireSomethingSealed(ctx, c, store); err != nil {
		return err
	}
	// Opening the keys also stores the derived keys of a deployment that
	// has none yet (derived from the previous key), so that they move to
	// the new key with the rest.
	if err := w.openKeys(ctx, masterKey); err != nil {
		return fmt.Errorf("rekey: %w", err)
	}
	res, err := tenant.Rekey(ctx, w.store, w.sealer)
	fmt.Fprintf(stdout, "rekey: %d rows re-wrapped under the new master key, %d already under it, %d failed; companies seen: %d, stored keys seen: %d, webhooks seen: %d\n",
		res.Changed, res.Skipped, res.Failed, res.Companies, res.Keys, res.Webhooks)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "rekey: done; every sealed value opens with master_key alone: master_key_previous can be removed once every replica runs with the new master_key")
	return nil
}

// requireSomethingSealed refuses a store with no company and no stored
// key: the service stores its derived keys at its first start, so such a
// store was never the service's, and a rotation of it would report
// success over nothing.
func requireSomethingSealed(ctx context.Context, c Config, s tenant.KeyStore) error {
	names, err := s.SealedKeyNames(ctx)
	if err != nil {
		return fmt.Errorf("rekey: %w", err)
	}
	rows, err := s.SealedRows(ctx, 0, 1)
	if err != nil {
		return fmt.Errorf("rekey: %w", err)
	}
	if len(names) == 0 && len(rows) == 0 {
		return fmt.Errorf("rekey: the store holds no company and no stored key, so the service never ran on it: check %s or %s", c.name("data_dir"), c.name("database_url"))
	}
	return nil
}
