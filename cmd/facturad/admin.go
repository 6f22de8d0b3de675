package main

import (
	"context"
	"fmt"
	"io"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/tenant"
)

// runAdminReset recovers admin access: it gives the bootstrap admin
// (admin_user, default "admin") new credentials on the configured store
// and prints the generated ones. admin_password and admin_token, when set,
// are used instead of generated values. The admin is created when absent
// and switched on again when deactivated.
//
// It works while the service runs: the new credentials are read from the
// store on their first use. The old ones stop at once on replicas that
// share Redis (their cached entries are dropped); a replica with its own
// in-process cache may accept them for up to tenant.DefaultAuthTTL more.
func runAdminReset(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	c, err := loadConfig("admin-reset", args, stdout, stderr, getenv)
	if err != nil {
		return err
	}
	c.Migrate = false // a recovery changes one user, never the schema
	if c.DatabaseURL == "" {
		if err := requireEmbeddedStore(c); err != nil {
			return fmt.Errorf("admin-reset: %w", err)
		}
	}
	log := newLogger(stderr, c.LogLevel)
	var stop cleanups
	stop.log = log
	defer stop.run(context.Background())
	w := &wiring{c: c, log: log, stop: &stop, reg: prometheus.NewRegistry()}
	if err := w.openStoreAndKeys(ctx); err != nil {
		return fmt.Errorf("admin-reset: %w", err)
	}
	if err := w.openCacheAndLimiter(); err != nil {
		return fmt.Errorf("admin-reset: %w", err)
	}
	if err := w.openTenants(); err != nil {
		return fmt.Errorf("admin-reset: %w", err)
	}
	ch, err := w.tenants.SetAdminCredentials(ctx, c.AdminUser, c.AdminPassword, c.AdminToken, true)
	if err != nil {
		return fmt.Errorf("admin-reset: %w", err)
	}
	if ch.Changed() {
		recordCommand(ctx, w.tenants, log, "admin-reset", 0, tenant.AuditAdminReset, adminChangeFields(ch)...)
	}
	printAdminChange(stdout, ch)
	if ch.Changed() && c.RedisURL == "" {
		fmt.Fprintf(stdout, "a service running now without %s may accept the old credentials for up to %s more (its own cache); the new ones work at once\n",
			c.name("redis_url"), tenant.DefaultAuthTTL)
	}
	return nil
}

// adminChangeFields names what an admin reset changed, for the audit log:
// the user (created), its contrasena, its apiToken, activo (switched on
// again). Never the values.
func adminChangeFields(ch tenant.AdminChange) []string {
	var fields []string
	for _, f := range []struct {
		set  bool
		name string
	}{{ch.Created, "usuario"}, {ch.PasswordSet, "contrasena"}, {ch.TokenSet, "apiToken"}, {ch.Reactivated, "activo"}} {
		if f.set {
			fields = append(fields, f.name)
		}
	}
	return fields
}
