package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/metrics"
)

func TestPoolCollectors(t *testing.T) {
	db := metrics.DBPoolStats{AcquiredConns: 3, IdleConns: 2, TotalConns: 5, MaxConns: 10,
		Acquires: 1000, EmptyAcquires: 7, CanceledAcquires: 1, AcquireWait: 1500 * time.Millisecond}
	rd := metrics.RedisPoolStats{Hits: 90, Misses: 10, Timeouts: 2, StaleConns: 1, TotalConns: 4, IdleConns: 3}
	tests := []struct {
		name string
		c    prometheus.Collector
		want string
	}{
		{"ok/postgres pool", metrics.NewDBPoolCollector(func() metrics.DBPoolStats { return db }), `
# HELP facturad_pgxpool_acquire_wait_seconds_total Time spent acquiring PostgreSQL connections.
# TYPE facturad_pgxpool_acquire_wait_seconds_total counter
facturad_pgxpool_acquire_wait_seconds_total 1.5
# HELP facturad_pgxpool_acquired_conns PostgreSQL connections in use.
# TYPE facturad_pgxpool_acquired_conns gauge
facturad_pgxpool_acquired_conns 3
# HELP facturad_pgxpool_acquires_total PostgreSQL connections acquired from the pool.
# TYPE facturad_pgxpool_acquires_total counter
facturad_pgxpool_acquires_total 1000
# HELP facturad_pgxpool_canceled_acquires_total Acquires of a PostgreSQL connection given up because the caller's context ended.
# TYPE facturad_pgxpool_canceled_acquires_total counter
facturad_pgxpool_canceled_acquires_total 1
# HELP facturad_pgxpool_empty_acquires_total Acquires that found no idle PostgreSQL connection and waited for one.
# TYPE facturad_pgxpool_empty_acquires_total counter
facturad_pgxpool_empty_acquires_total 7
# HELP facturad_pgxpool_idle_conns PostgreSQL connections idle in the pool.
# TYPE facturad_pgxpool_idle_conns gauge
facturad_pgxpool_idle_conns 2
# HELP facturad_pgxpool_max_conns Most PostgreSQL connections the pool opens.
# TYPE facturad_pgxpool_max_conns gauge
facturad_pgxpool_max_conns 10
# HELP facturad_pgxpool_total_conns PostgreSQL connections open (in use, idle and being opened).
# TYPE facturad_pgxpool_total_conns gauge
facturad_pgxpool_total_conns 5
`},
		{"ok/redis pool", metrics.NewRedisPoolCollector(func() metrics.RedisPoolStats { return rd }), `
# HELP facturad_redis_pool_hits_total Redis calls that found an idle connection in the pool.
# TYPE facturad_redis_pool_hits_total counter
facturad_redis_pool_hits_total 90
# HELP facturad_redis_pool_idle_conns Redis connections idle in the pool.
# TYPE facturad_redis_pool_idle_conns gauge
facturad_redis_pool_idle_conns 3
# HELP facturad_redis_pool_misses_total Redis calls that found no idle connection in the pool.
# TYPE facturad_redis_pool_misses_total counter
facturad_redis_pool_misses_total 10
# HELP facturad_redis_pool_stale_conns_total Redis connections dropped from the pool as stale.
# TYPE facturad_redis_pool_stale_conns_total counter
facturad_redis_pool_stale_conns_total 1
# HELP facturad_redis_pool_timeouts_total Redis calls that waited for a pool connection in vain.
# TYPE facturad_redis_pool_timeouts_total counter
facturad_redis_pool_timeouts_total 2
# HELP facturad_redis_pool_total_conns Redis connections open.
# TYPE facturad_redis_pool_total_conns gauge
facturad_redis_pool_total_conns 4
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := testutil.CollectAndCompare(tt.c, strings.NewReader(tt.want)); err != nil {
				t.Error(err)
			}
			if problems, err := testutil.CollectAndLint(tt.c); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", problems, err)
			}
		})
	}
}

// The statistics are read at each scrape, not once.
func TestPoolCollectorReadsAtScrape(t *testing.T) {
	var n int32
	c := metrics.NewDBPoolCollector(func() metrics.DBPoolStats { n++; return metrics.DBPoolStats{AcquiredConns: n} })
	for want := 1.0; want <= 3; want++ {
		if got := testutil.ToFloat64(prometheus.CollectorFunc(func(ch chan<- prometheus.Metric) {
			mc := make(chan prometheus.Metric, 16)
			c.Collect(mc)
			close(mc)
			ch <- <-mc // the first is acquired_conns
		})); got != want {
			t.Errorf("scrape %v: acquired %v", want, got)
		}
	}
}
