package postgres_test

import (
	"context"
	"testing"

	"facturad/tenant/storetest"
)

func TestStateStore(t *testing.T) {
	storetest.RunState(t, func(t *testing.T) storetest.StateStore { return storetest.NewPostgresStore(t) })
}

func TestPoolStats(t *testing.T) {
	s := storetest.NewPostgresStore(t) // MaxConns 4
	before := s.PoolStats()
	for range 5 {
		if err := s.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	after := s.PoolStats()
	if after.MaxConns != 4 {
		t.Errorf("MaxConns %d, want 4", after.MaxConns)
	}
	if after.Acquires < before.Acquires+5 {
		t.Errorf("Acquires went from %d to %d over 5 pings", before.Acquires, after.Acquires)
	}
	if after.TotalConns < 1 || after.AcquiredConns != 0 || after.IdleConns != after.TotalConns {
		t.Errorf("idle pool: %+v", after)
	}
}
