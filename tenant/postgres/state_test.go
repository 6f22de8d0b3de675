package postgres_test

import (
	"context"
	"testing"
	"time"

	"facturad/tenant/postgres"
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

// Leases run on the server's clock: replicas whose clocks are an hour
// apart, either way, still agree on when a lease ends.
func TestLeaseIgnoresReplicaClocks(t *testing.T) {
	ctx := context.Background()
	skews := []time.Duration{time.Hour, -time.Hour}
	a, b := storetest.NewPostgresReplicas(t, func(i int, o *postgres.Options) {
		o.MaxConns, o.Now = 2, func() time.Time { return time.Now().Add(skews[i]) }
	})
	stores := [2]*postgres.Store{a, b}
	const ttl = time.Second
	steps := []struct {
		replica int
		sleep   time.Duration
		want    bool
	}{
		{0, 0, true},           // ahead by an hour: takes it for a second
		{1, 0, false},          // behind by an hour: still a's
		{1, ttl + ttl/4, true}, // a's second is over
		{0, 0, false},          // b's now
		{0, ttl + ttl/4, true}, // and back once b's is over
	}
	for i, st := range steps {
		time.Sleep(st.sleep)
		got, err := stores[st.replica].TakeLease(ctx, "state", []string{"a", "b"}[st.replica], ttl)
		if err != nil {
			t.Fatalf("step %d: TakeLease: %v", i, err)
		}
		if got != st.want {
			t.Errorf("step %d: replica %d takes = %v, want %v", i, st.replica, got, st.want)
		}
	}
}
