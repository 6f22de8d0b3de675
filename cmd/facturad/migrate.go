package main

import (
	"context"
	"fmt"
	"io"

	"facturad/tenant/postgres"
)

// runMigrate applies the PostgreSQL migrations and exits. Replicas may also
// apply them at start-up with --migrate; the migrations take an advisory
// lock, so both ways are safe to run at once.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	c, err := loadConfig("migrate", args, stdout, stderr, getenv)
	if err != nil {
		return err
	}
	if c.DatabaseURL == "" {
		return fmt.Errorf("migrate: %s is not set (the embedded SQLite store migrates itself at start)", c.name("database_url"))
	}
	if err := postgres.Migrate(ctx, c.DatabaseURL, postgres.Options{}); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	newLogger(stderr, c.LogLevel).Info("migrations applied")
	return nil
}
