package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"facturad/tenant"
)

// runRekey re-wraps every sealed value still under master_key_previous
// with master_key, while the service keeps running (see tenant.Rekey). It
// is safe to stop and run again: what is done is skipped.
func runRekey(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) (err error) {
	c, err := loadConfig("rekey", args, stderr, getenv)
	if err != nil {
		return err
	}
	if c.MasterKeyPrevious == "" {
		return errors.New("rekey: master_key_previous is not set: set master_key to the new key and master_key_previous to the one being replaced (docs/operations.md, \"Rotate the master key\")")
	}
	log := newLogger(stderr, c.LogLevel)
	var stop cleanups
	stop.log = log
	defer stop.run(context.Background())
	w := &wiring{c: c, log: log, stop: &stop}
	// Opening the keys also stores the derived keys of a deployment that
	// has none yet (derived from the previous key), so that they move to
	// the new key with the rest.
	if err := w.openStoreAndKeys(ctx); err != nil {
		return fmt.Errorf("rekey: %w", err)
	}
	res, err := tenant.Rekey(ctx, w.store, w.sealer)
	fmt.Fprintf(stdout, "rekey: %d rows re-wrapped under the new master key, %d already under it, %d failed\n",
		res.Changed, res.Skipped, res.Failed)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "rekey: done; every sealed value opens with master_key alone: master_key_previous can be removed once every replica runs with the new master_key")
	return nil
}
