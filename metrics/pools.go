package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DBPoolStats is a snapshot of the PostgreSQL connection pool, as the store
// reads it from pgxpool.
type DBPoolStats struct {
	AcquiredConns, IdleConns, TotalConns, MaxConns int32
	// Acquires, EmptyAcquires (the caller had to wait for a connection) and
	// CanceledAcquires (its context ended first) count since the start.
	Acquires, EmptyAcquires, CanceledAcquires int64
	// AcquireWait is the time spent acquiring connections since the start.
	AcquireWait time.Duration
}

// RedisPoolStats is a snapshot of a go-redis connection pool.
type RedisPoolStats struct {
	// Hits found an idle connection, Misses did not; Timeouts waited for
	// one in vain; StaleConns counts the connections dropped as stale.
	// All count since the start.
	Hits, Misses, Timeouts, StaleConns uint32
	TotalConns, IdleConns              uint32
}

// NewDBPoolCollector exports the PostgreSQL pool statistics that stat
// reads, at each scrape: facturad_pgxpool_*.
func NewDBPoolCollector(stat func() DBPoolStats) prometheus.Collector {
	return &poolCollector{read: func(emit func(*prometheus.Desc, prometheus.ValueType, float64)) {
		s := stat()
		emit(descPgxAcquired, prometheus.GaugeValue, float64(s.AcquiredConns))
		emit(descPgxIdle, prometheus.GaugeValue, float64(s.IdleConns))
		emit(descPgxTotal, prometheus.GaugeValue, float64(s.TotalConns))
		emit(descPgxMax, prometheus.GaugeValue, float64(s.MaxConns))
		emit(descPgxAcquires, prometheus.CounterValue, float64(s.Acquires))
		emit(descPgxEmpty, prometheus.CounterValue, float64(s.EmptyAcquires))
		emit(descPgxCanceled, prometheus.CounterValue, float64(s.CanceledAcquires))
		emit(descPgxWait, prometheus.CounterValue, s.AcquireWait.Seconds())
	}, descs: []*prometheus.Desc{descPgxAcquired, descPgxIdle, descPgxTotal, descPgxMax, descPgxAcquires, descPgxEmpty, descPgxCanceled, descPgxWait}}
}

// NewRedisPoolCollector exports the Redis pool statistics that stat reads,
// at each scrape: facturad_redis_pool_*.
func NewRedisPoolCollector(stat func() RedisPoolStats) prometheus.Collector {
	return &poolCollector{read: func(emit func(*prometheus.Desc, prometheus.ValueType, float64)) {
		s := stat()
		emit(descRedisHits, prometheus.CounterValue, float64(s.Hits))
		emit(descRedisMisses, prometheus.CounterValue, float64(s.Misses))
		emit(descRedisTimeouts, prometheus.CounterValue, float64(s.Timeouts))
		emit(descRedisStale, prometheus.CounterValue, float64(s.StaleConns))
		emit(descRedisTotal, prometheus.GaugeValue, float64(s.TotalConns))
		emit(descRedisIdle, prometheus.GaugeValue, float64(s.IdleConns))
	}, descs: []*prometheus.Desc{descRedisHits, descRedisMisses, descRedisTimeouts, descRedisStale, descRedisTotal, descRedisIdle}}
}

func poolDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(Namespace+"_"+name, help, nil, nil)
}

var (
	descPgxAcquired = poolDesc("pgxpool_acquired_conns", "PostgreSQL connections in use.")
	descPgxIdle     = poolDesc("pgxpool_idle_conns", "PostgreSQL connections idle in the pool.")
	descPgxTotal    = poolDesc("pgxpool_total_conns", "PostgreSQL connections open (in use, idle and being opened).")
	descPgxMax      = poolDesc("pgxpool_max_conns", "Most PostgreSQL connections the pool opens.")
	descPgxAcquires = poolDesc("pgxpool_acquires_total", "PostgreSQL connections acquired from the pool.")
	descPgxEmpty    = poolDesc("pgxpool_empty_acquires_total", "Acquires that found no idle PostgreSQL connection and waited for one.")
	descPgxCanceled = poolDesc("pgxpool_canceled_acquires_total", "Acquires of a PostgreSQL connection given up because the caller's context ended.")
	descPgxWait     = poolDesc("pgxpool_acquire_wait_seconds_total", "Time spent acquiring PostgreSQL connections.")

	descRedisHits     = poolDesc("redis_pool_hits_total", "Redis calls that found an idle connection in the pool.")
	descRedisMisses   = poolDesc("redis_pool_misses_total", "Redis calls that found no idle connection in the pool.")
	descRedisTimeouts = poolDesc("redis_pool_timeouts_total", "Redis calls that waited for a pool connection in vain.")
	descRedisStale    = poolDesc("redis_pool_stale_conns_total", "Redis connections dropped from the pool as stale.")
	descRedisTotal    = poolDesc("redis_pool_total_conns", "Redis connections open.")
	descRedisIdle     = poolDesc("redis_pool_idle_conns", "Redis connections idle in the pool.")
)

// poolCollector reads a pool's statistics at scrape time and exports them
// as constant metrics.
type poolCollector struct {
	read  func(emit func(*prometheus.Desc, prometheus.ValueType, float64))
	descs []*prometheus.Desc
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	c.read(func(d *prometheus.Desc, t prometheus.ValueType, v float64) {
		ch <- prometheus.MustNewConstMetric(d, t, v)
	})
}
