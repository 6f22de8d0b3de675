package main

import (
	"fmt"
	"net/url"
	"time"

	"facturad/hacienda/registry"
	"facturad/pipeline"
	"facturad/pipeline/redislimit"
	"facturad/tenant"
	"facturad/tenant/authcache"
)

// The pace of the calls to the registries over every replica sharing
// redis_url: half the sustained rate the registry publishes (10 calls a
// second over 120 s; 20 a second over 5 s blocks the address for 10
// minutes), so that a burst of cold lookups never nears it.
const (
	registryRate  = 5.0
	registryBurst = 10
	// registryWait is how long a send or lookup waits for an answer not
	// cached; the call goes on and fills the cache for the next one.
	registryWait = 3 * time.Second
)

// openRegistry makes the registries' client (A.13) and the cache every
// replica shares: Redis when redis_url is set, the store otherwise.
// sandboxRoot is the built-in sandbox's base URL ("" when there is none);
// an explicit registry_url always wins, and a sandbox run elsewhere is
// asked at the root of hacienda_api_url.
func (w *wiring) openRegistry(sandboxRoot string) (*registry.Registry, error) {
	base := w.c.RegistryURL
	switch {
	case base != "":
	case sandboxRoot != "":
		base = sandboxRoot
	case w.c.HaciendaEnv == "sandbox" && w.c.HaciendaAPI != "":
		// A sandbox run elsewhere (facturad sandbox) serves the
		// registries at its root, beside its reception API: its made-up
		// taxpayers are unknown to the real registry.
		if u, err := url.Parse(w.c.HaciendaAPI); err == nil && u.Host != "" {
			base = u.Scheme + "://" + u.Host
		}
	}
	client, err := registry.NewClient(registry.ClientOptions{BaseURL: base})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.c.name("registry_url"), err)
	}
	var (
		cache registry.Cache
		pacer registry.Pacer
	)
	if w.redis != nil {
		// The registries' answers are public data: every deployment on
		// this Redis may share them, and the registry's block of the
		// address they share.
		rc, err := authcache.NewRedis(w.redis, authcache.RedisOptions{Prefix: "facturad:registry:"})
		if err != nil {
			return nil, fmt.Errorf("redis registry cache: %w", err)
		}
		cache = rc
		if pacer, err = redislimit.New(w.redis, redislimit.Options{Rate: registryRate, Burst: registryBurst,
			Prefix: "facturad:registry-pace:", Logger: w.log}); err != nil {
			return nil, fmt.Errorf("registry pace: %w", err)
		}
	} else {
		rs, ok := w.store.(tenant.RegistryStore)
		if !ok {
			return nil, fmt.Errorf("the store keeps no registry cache")
		}
		cache = tenant.RegistryCache{Store: rs}
		pacer = pipeline.NewTokenBucket(registryRate, registryBurst)
	}
	reg, err := registry.New(registry.Options{Client: client, Cache: cache, Pacer: pacer, TTL: w.c.RegistryTTL,
		Wait: registryWait, Logger: w.log.With("component", "registry"), Registerer: w.reg})
	if err != nil {
		return nil, err
	}
	w.log.Info("registries", "url", client.BaseURL(), "checks", w.c.RegistryChecks, "ttl_s", w.c.RegistryTTL.Seconds())
	return reg, nil
}
