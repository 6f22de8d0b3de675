package tenant

import (
	"context"
	"errors"
	"fmt"
)

// SealedRow is one company's sealed columns as stored, the unit that a
// master-key rotation reads and replaces.
type SealedRow struct {
	CompanyID          int64
	ContrasenaHacienda []byte
	Certificate        []byte
	CertificatePIN     []byte
}

// KeyStore keeps the keys the service derived from its master key, sealed
// (see DerivedKey), and lets a rotation move every sealed value to a new
// master key. Both stores implement it.
type KeyStore interface {
	// SealedRows returns the sealed columns of at most limit companies
	// with an id above afterID, ordered by id.
	SealedRows(ctx context.Context, afterID int64, limit int) ([]SealedRow, error)
	// SealedRow returns one company's sealed columns.
	SealedRow(ctx context.Context, companyID int64) (SealedRow, error)
	// ReplaceSealedRow writes next's sealed columns over company
	// old.CompanyID only if all three are still old's (compare and set,
	// one statement), and reports whether it wrote. Nothing else of the
	// row changes: not UpdatedAt, not CertificateVersion.
	ReplaceSealedRow(ctx context.Context, old, next SealedRow) (bool, error)

	// SealedKey returns the sealed key stored under name, or ErrNotFound.
	SealedKey(ctx context.Context, name string) ([]byte, error)
	// AddSealedKey stores sealed under name unless name is taken, in which
	// case the stored value is kept and no error is returned.
	AddSealedKey(ctx context.Context, name string, sealed []byte) error
	// ReplaceSealedKey writes next under name only if the stored value is
	// still old, and reports whether it wrote.
	ReplaceSealedKey(ctx context.Context, name string, old, next []byte) (bool, error)
	// SealedKeyNames lists the names of the stored keys.
	SealedKeyNames(ctx context.Context) ([]string, error)
}

// Rewrapper moves a sealed value to the current master key (tenant/seal's
// Sealer implements it): changed is false for a value already under it.
type Rewrapper interface {
	Rewrap(companyID int64, purpose string, sealed []byte) (out []byte, changed bool, err error)
}

// derivedKeyPurpose is the associated data of a stored derived key; its
// company id is 0, which no company has.
func derivedKeyPurpose(name string) string { return "derived-key " + name }

// DerivedKey returns the key stored under name, sealed, in the store,
// storing derive's result the first time.
//
// Keys the service derives from its master key (the credential key of the
// generated API passwords, the auth cache's key, the callback key) must
// outlive a master-key rotation: changing the credential key would lock out
// every API user. So the first start stores each of them sealed under the
// master key, and every later start, on any replica and under any later
// master key, opens the stored one; a rotation re-wraps it with the
// companies' secrets. When replicas race the first time, the first value
// stored wins and all of them read it back.
func DerivedKey(ctx context.Context, store KeyStore, sealer Sealer, name string, derive func() ([]byte, error)) ([]byte, error) {
	purpose := derivedKeyPurpose(name)
	sealed, err := store.SealedKey(ctx, name)
	if errors.Is(err, ErrNotFound) {
		if err := addDerivedKey(ctx, store, sealer, name, derive); err != nil {
			return nil, err
		}
		sealed, err = store.SealedKey(ctx, name)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	k, err := sealer.Open(0, purpose, sealed)
	if err != nil {
		return nil, fmt.Errorf("open %s (is the master key, or master_key_previous during a rotation, the right one?): %w", name, err)
	}
	return k, nil
}

// addDerivedKey stores derive's key under name, sealed, unless another
// replica stored one first.
func addDerivedKey(ctx context.Context, store KeyStore, sealer Sealer, name string, derive func() ([]byte, error)) error {
	k, err := derive()
	if err != nil {
		return fmt.Errorf("derive %s: %w", name, err)
	}
	sealed, err := sealer.Seal(0, derivedKeyPurpose(name), k)
	clear(k)
	if err != nil {
		return fmt.Errorf("seal %s: %w", name, err)
	}
	if err := store.AddSealedKey(ctx, name, sealed); err != nil {
		return fmt.Errorf("store %s: %w", name, err)
	}
	return nil
}

// RekeyResult counts what a rotation did: rows (companies and stored keys)
// re-wrapped, rows already under the current key, and rows it could not
// open (under none of the keys, or damaged); and, of the rows seen, how
// many were companies and how many stored keys.
type RekeyResult struct {
	Changed, Skipped, Failed int
	Companies, Keys          int
	// Webhooks counts the webhook secrets seen (stores that keep
	// webhooks, see WebhookSecretStore).
	Webhooks int
}

// WebhookSecretStore lets a rotation re-wrap the webhooks' sealed
// secrets. Both stores implement it; Rekey uses it when the store does.
type WebhookSecretStore interface {
	// SealedWebhooks returns at most limit webhooks with an id above
	// afterID, ordered by id.
	SealedWebhooks(ctx context.Context, afterID int64, limit int) ([]Webhook, error)
	// ReplaceWebhookSecret writes next over webhook id's secret only if it
	// is still old, and reports whether it wrote.
	ReplaceWebhookSecret(ctx context.Context, id int64, old, next []byte) (bool, error)
}

// rekeyBatch is how many companies one read returns; every write is a
// statement of its own.
const rekeyBatch = 100

// rekeyRetries bounds how often one row is read again after a concurrent
// update won its compare-and-set.
const rekeyRetries = 5

// Rekey re-wraps every sealed value in the store (each company's tax
// authority password, certificate and PIN, and the stored derived keys)
// that is not yet under r's current master key.
//
// It is online: it reads in batches and writes each row with one
// compare-and-set statement, so the service keeps running, and a company
// updated meanwhile is read again and re-wrapped as it now is. It is
// resumable: rows already under the current key are skipped, so a run
// that was stopped half-way is finished by running it again. A row that
// opens under no key is counted in Failed and named in the error, and the
// others are still done.
func Rekey(ctx context.Context, store KeyStore, r Rewrapper) (RekeyResult, error) {
	var res RekeyResult
	var failed []error
	names, err := store.SealedKeyNames(ctx)
	if err != nil {
		return res, fmt.Errorf("rekey: %w", err)
	}
	for _, name := range names {
		changed, err := rekeyKey(ctx, store, r, name)
		if err := rekeyCount(&res, &failed, changed, err); err != nil {
			return res, err
		}
		res.Keys++
	}
	for after := int64(0); ; {
		rows, err := store.SealedRows(ctx, after, rekeyBatch)
		if err != nil {
			return res, fmt.Errorf("rekey: %w", err)
		}
		for _, row := range rows {
			changed, err := rekeyRow(ctx, store, r, row)
			if err := rekeyCount(&res, &failed, changed, err); err != nil {
				return res, err
			}
			res.Companies++
			after = row.CompanyID
		}
		if len(rows) < rekeyBatch {
			break
		}
	}
	if ws, ok := store.(WebhookSecretStore); ok {
		if err := rekeyWebhooks(ctx, ws, r, &res, &failed); err != nil {
			return res, err
		}
	}
	if len(failed) > 0 {
		return res, fmt.Errorf("rekey: %d rows could not be re-wrapped: %w", len(failed), errors.Join(failed...))
	}
	return res, nil
}

// rekeyWebhooks re-wraps every webhook's secret, in batches, each with a
// compare-and-set; a webhook removed or re-wrapped meanwhile is skipped.
func rekeyWebhooks(ctx context.Context, ws WebhookSecretStore, r Rewrapper, res *RekeyResult, failed *[]error) error {
	for after := int64(0); ; {
		hooks, err := ws.SealedWebhooks(ctx, after, rekeyBatch)
		if err != nil {
			return fmt.Errorf("rekey: %w", err)
		}
		for _, w := range hooks {
			after = w.ID
			res.Webhooks++
			next, changed, err := r.Rewrap(w.CompanyID, PurposeWebhookSecret, w.SealedSecret)
			if err != nil {
				if err := rekeyCount(res, failed, false, errRowFailed{fmt.Errorf("webhook %d: %w", w.ID, err)}); err != nil {
					return err
				}
				continue
			}
			if changed {
				ok, err := ws.ReplaceWebhookSecret(ctx, w.ID, w.SealedSecret, next)
				if err != nil {
					return fmt.Errorf("rekey: webhook %d: %w", w.ID, err)
				}
				changed = ok
			}
			if err := rekeyCount(res, failed, changed, nil); err != nil {
				return err
			}
		}
		if len(hooks) < rekeyBatch {
			return nil
		}
	}
}

// errRowFailed marks a row that could not be re-wrapped, as opposed to a
// store failure that ends the run.
type errRowFailed struct{ err error }

func (e errRowFailed) Error() string { return e.err.Error() }
func (e errRowFailed) Unwrap() error { return e.err }

// rekeyCount adds one row's outcome to res, and returns the error that
// must end the run, if any.
func rekeyCount(res *RekeyResult, failed *[]error, changed bool, err error) error {
	var rf errRowFailed
	switch {
	case errors.As(err, &rf):
		res.Failed++
		*failed = append(*failed, rf.err)
	case err != nil:
		return fmt.Errorf("rekey: %w", err)
	case changed:
		res.Changed++
	default:
		res.Skipped++
	}
	return nil
}

func rekeyKey(ctx context.Context, store KeyStore, r Rewrapper, name string) (bool, error) {
	for range rekeyRetries {
		old, err := store.SealedKey(ctx, name)
		if err != nil {
			return false, err
		}
		next, changed, err := r.Rewrap(0, derivedKeyPurpose(name), old)
		if err != nil {
			return false, errRowFailed{fmt.Errorf("stored key %s: %w", name, err)}
		}
		if !changed {
			return false, nil
		}
		ok, err := store.ReplaceSealedKey(ctx, name, old, next)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, fmt.Errorf("stored key %s: changed %d times while being re-wrapped", name, rekeyRetries)
}

func rekeyRow(ctx context.Context, store KeyStore, r Rewrapper, row SealedRow) (bool, error) {
	for try := 0; try < rekeyRetries; try++ {
		if try > 0 {
			var err error
			if row, err = store.SealedRow(ctx, row.CompanyID); errors.Is(err, ErrNotFound) {
				return false, nil
			} else if err != nil {
				return false, err
			}
		}
		next := SealedRow{CompanyID: row.CompanyID}
		moved := false
		for _, c := range []struct {
			purpose string
			old     []byte
			next    *[]byte
		}{
			{PurposeHaciendaPassword, row.ContrasenaHacienda, &next.ContrasenaHacienda},
			{PurposeCertificate, row.Certificate, &next.Certificate},
			{PurposeCertificatePIN, row.CertificatePIN, &next.CertificatePIN},
		} {
			out, changed, err := r.Rewrap(row.CompanyID, c.purpose, c.old)
			if err != nil {
				return false, errRowFailed{fmt.Errorf("company %d, %s: %w", row.CompanyID, c.purpose, err)}
			}
			*c.next = out
			moved = moved || changed
		}
		if !moved {
			return false, nil
		}
		ok, err := store.ReplaceSealedRow(ctx, row, next)
		if err != nil {
			return false, fmt.Errorf("company %d: %w", row.CompanyID, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, fmt.Errorf("company %d: changed %d times while being re-wrapped", row.CompanyID, rekeyRetries)
}
