package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestMigrateReadsOnlyItsSettings runs `facturad migrate` as the ha
// overlay's init container does: the service's whole environment, but no
// master key (migrate opens no sealed value), and a setting it does not
// read holding a value serve would refuse.
func TestMigrateReadsOnlyItsSettings(t *testing.T) {
	url := postgresSchema(t)
	var stderr strings.Builder
	environ := env(map[string]string{
		"FACTURAD_DATABASE_URL":    url,
		"FACTURAD_LOG_LEVEL":       "info",
		"FACTURAD_WEBHOOK_WORKERS": "many",
		"FACTURAD_HACIENDA_ENV":    "nowhere",
	})
	if err := run(context.Background(), []string{"migrate"}, io.Discard, &stderr, environ); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "migrations applied") {
		t.Errorf("migrate logged %q, want its line saying the migrations are applied", stderr.String())
	}

	err := run(context.Background(), []string{"migrate"}, io.Discard, io.Discard, env(nil))
	if err == nil || !strings.Contains(err.Error(), "FACTURAD_DATABASE_URL is not set") {
		t.Errorf("migrate without database_url = %v, want the error naming it", err)
	}
}
