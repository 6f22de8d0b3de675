package tenant

import (
	"context"
	"time"

	"facturad/hacienda/registry"
)

// RegistryStore keeps the answers of the tax authority's public registries
// (A.13) for every replica, when the deployment has no Redis for them. Keys
// and values are the registry package's: the store treats values as opaque
// bytes. Both store adapters implement it.
type RegistryStore interface {
	// RegistryGet returns the value under key; ok is false when there is
	// none or it was to be forgotten by the store's clock.
	RegistryGet(ctx context.Context, key string) (value []byte, ok bool, err error)
	// RegistryPut stores value under key (replacing any value there), to be
	// forgotten keep after the store's clock; keep 0 means never. A
	// negative keep is an error. Every RegistryPurgeEvery puts of a Store,
	// the put also deletes up to RegistryPurgeBatch forgotten rows, so that
	// the table holds little more than what can still be read.
	RegistryPut(ctx context.Context, key string, value []byte, keep time.Duration) error
	// PurgeRegistry deletes up to limit rows whose forget time is at or
	// before now, and says how many it deleted.
	PurgeRegistry(ctx context.Context, now time.Time, limit int) (int, error)
}

// How often a RegistryStore's puts delete forgotten rows, and how many at
// most each time: a put is cheap, and the registry caches a few answers per
// document, so a small batch every few puts keeps up.
const (
	RegistryPurgeEvery = 64
	RegistryPurgeBatch = 256
)

// RegistryCache is a RegistryStore seen as the registry's cache
// (registry.Cache): Get and Set.
type RegistryCache struct {
	Store RegistryStore
}

// Get returns the value under key (see RegistryStore.RegistryGet).
func (c RegistryCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	return c.Store.RegistryGet(ctx, key)
}

// Set stores value under key for keep, 0 meaning never forgotten (see
// RegistryStore.RegistryPut).
func (c RegistryCache) Set(ctx context.Context, key string, value []byte, keep time.Duration) error {
	return c.Store.RegistryPut(ctx, key, value, keep)
}

// FieldValidacionesRegistro is the company field's name in forms, answers
// and errors.
const FieldValidacionesRegistro = "validacionesRegistro"

// ValidRegistryChecks reports whether v is one of the values of
// Company.ValidacionesRegistro: a registry.Policy (refuse, warn, off), or
// "" for the service's setting (FACTURAD_REGISTRY_CHECKS).
func ValidRegistryChecks(v string) bool {
	if v == "" {
		return true
	}
	p, err := registry.ParsePolicy(v)
	return err == nil && string(p) == v
}
