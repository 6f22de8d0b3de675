package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"facturad/gateway/client"
	"facturad/signer/certmint"
)

// CPU references of loadgen beside the service's own CPU time:
// a raw RSA signature measured in this process during and after the run,
// and the CPU time of other processes the service relies on.

// The raw RSA reference: rsaBatches batches of rsaBatchSize signatures.
const (
	rsaBatches   = 5
	rsaBatchSize = 40
)

// selfCPU is the CPU time (user + system) this process has used, every
// thread together, to the microsecond.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// rawRSASignCPU measures the CPU time of one RSA-2048 PKCS#1 v1.5 SHA-256
// signature (hash included) with Go's crypto/rsa and a test key (the one
// the run's companies were minted with, already generated), in
// this process: the median over rsaBatches batches of the batch's process
// CPU time per signature. It runs once the load has stopped, since the
// process time counts every goroutine; the median sets aside a batch that
// shared the process with a late one or with the garbage collector.
func rawRSASignCPU() (time.Duration, error) {
	key := certmint.TestKey(1)
	msg := make([]byte, 1024) // about a signed document's SignedInfo and more
	per := make([]time.Duration, rsaBatches)
	for b := range per {
		t0, err := selfCPU()
		if err != nil {
			return 0, fmt.Errorf("raw RSA reference: %w", err)
		}
		for i := range rsaBatchSize {
			msg[0], msg[1] = byte(b), byte(i)
			h := sha256.Sum256(msg)
			if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, h[:]); err != nil {
				return 0, fmt.Errorf("raw RSA reference: sign: %w", err)
			}
		}
		t1, err := selfCPU()
		if err != nil {
			return 0, fmt.Errorf("raw RSA reference: %w", err)
		}
		per[b] = (t1 - t0) / rsaBatchSize
	}
	slices.Sort(per)
	return per[len(per)/2], nil
}

// The raw RSA reference during the run: every rsaSampleEvery, a batch of
// rsaSampleSize signatures on one locked thread, timed by that thread's
// own CPU time. About 0.4% of a core: it takes little from the service
// and is measured under the same load as the service's documents.
const (
	rsaSampleEvery = time.Second
	rsaSampleSize  = 4
)

// rsaSampler measures the raw RSA reference while the load runs (see
// rsaSampleEvery), so that the service's CPU per document and the
// signature it is set against share the machine's conditions: on a
// machine also busy with other work, the same code costs more CPU time
// than when it is idle, and a reference taken after the run, alone,
// flatters it.
type rsaSampler struct {
	stop chan struct{}
	done chan struct{}
	per  []time.Duration // per signature, one a batch
	err  error
}

// startRSASampler starts measuring a batch every every.
func startRSASampler(every time.Duration) *rsaSampler {
	s := &rsaSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go s.run(every)
	return s
}

func (s *rsaSampler) run(every time.Duration) {
	defer close(s.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	key := certmint.TestKey(1)
	msg := make([]byte, 1024)
	t := time.NewTicker(every)
	defer t.Stop()
	for b := 0; ; b++ {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		t0, err := threadCPU()
		if err != nil {
			s.err = err
			return
		}
		for i := range rsaSampleSize {
			msg[0], msg[1], msg[2] = byte(b), byte(b>>8), byte(i)
			h := sha256.Sum256(msg)
			if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, h[:]); err != nil {
				s.err = err
				return
			}
		}
		t1, err := threadCPU()
		if err != nil {
			s.err = err
			return
		}
		s.per = append(s.per, (t1-t0)/rsaSampleSize)
	}
}

// Stop ends the sampling and returns the median CPU time of one signature
// over the batches, and their number; -1 when none was measured.
func (s *rsaSampler) Stop() (time.Duration, int, error) {
	close(s.stop)
	<-s.done
	if s.err != nil {
		return -1, 0, fmt.Errorf("raw RSA reference during the run: %w", s.err)
	}
	if len(s.per) == 0 {
		return -1, 0, nil
	}
	slices.Sort(s.per)
	return s.per[len(s.per)/2], len(s.per), nil
}

// The processes named by --aux-process (a database server, a cache):
// their CPU time over the run, from Linux's /proc, so that what they spend
// per request can be reported beside the service's. A server that forks a
// process per connection (PostgreSQL) has processes come and go during the
// run; a child that has exited and been waited for has its time added to
// its parent's reaped time (cutime, cstime), which is counted too.

// procTimes are one process's figures from /proc/<pid>/stat.
type procTimes struct {
	ppid   int
	start  uint64        // clock ticks after boot: tells a reused pid
	own    time.Duration // utime + stime
	reaped time.Duration // cutime + cstime: its children waited for
}

// parseProcStat reads a /proc/<pid>/stat line: the command name (as in
// /proc/<pid>/comm) and the times.
func parseProcStat(b []byte) (string, procTimes, error) {
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses of its own.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", procTimes{}, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 {
		return "", procTimes{}, errors.New("unreadable /proc stat")
	}
	var n [5]int64
	for i, field := range []int{1, 11, 12, 13, 14} { // ppid utime stime cutime cstime
		v, err := strconv.ParseInt(f[field], 10, 64)
		if err != nil {
			return "", procTimes{}, errors.New("unreadable /proc stat")
		}
		n[i] = v
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return "", procTimes{}, errors.New("unreadable /proc stat")
	}
	// Clock ticks of 1/100 s, the kernel's USER_HZ on every Linux
	// architecture Go supports.
	tick := time.Second / 100
	return string(b[open+1 : end]), procTimes{ppid: int(n[0]), start: start,
		own: time.Duration(n[1]+n[2]) * tick, reaped: time.Duration(n[3]+n[4]) * tick}, nil
}

// procSnapshot is the figures of every process of one name, by pid.
type procSnapshot map[int]procTimes

// snapshotProcs reads the figures of the processes named by names, one
// snapshot a name. A process that exits while it is read is left out, and
// so is this one: its time is reported apart, and replicas of the service
// run from the same binary can then be counted by its name.
func snapshotProcs(names []string) ([]procSnapshot, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("processes: %w", err)
	}
	snaps := make([]procSnapshot, len(names))
	for i := range snaps {
		snaps[i] = procSnapshot{}
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		comm, t, err := parseProcStat(b)
		if err != nil {
			continue
		}
		if i := slices.Index(names, comm); i >= 0 {
			snaps[i][pid] = t
		}
	}
	return snaps, nil
}

// procsCPU is the CPU time the processes of one name used between two
// snapshots: the growth of each one's own and reaped time; all of that
// of a process started since; and, for a process gone since whose parent
// is still there among them, less what it had used before, since its
// whole time has moved into its parent's reaped time. (A process gone
// whose parent is another program, or does not wait for its children,
// takes its time with it.)
func procsCPU(before, after procSnapshot) time.Duration {
	same := func(s procSnapshot, pid int, t procTimes) bool {
		u, ok := s[pid]
		return ok && u.start == t.start
	}
	var d time.Duration
	for pid, a := range after {
		d += a.own + a.reaped
		if b := before[pid]; same(before, pid, a) {
			d -= b.own + b.reaped
		}
	}
	for pid, b := range before {
		if same(after, pid, b) {
			continue
		}
		if parent, ok := before[b.ppid]; ok && same(after, b.ppid, parent) {
			d -= b.own + b.reaped
		}
	}
	return max(d, 0)
}

// auxUsage is the CPU time of the processes of one --aux-process name over
// the measured run.
type auxUsage struct {
	Name        string
	Processes   int           // seen at the start or the end
	CPU         time.Duration // -1: unavailable
	Unavailable string        // why
}

// perRequest is the CPU time per measured call, or -1 when unknown.
func (u auxUsage) perRequest(requests int) time.Duration {
	if u.CPU < 0 || requests == 0 {
		return -1
	}
	return u.CPU / time.Duration(requests)
}

// auxUsages sets the snapshots taken at the start and the end of the run
// side by side; err0 and err1 are the errors of taking them.
func auxUsages(names []string, start, end []procSnapshot, err0, err1 error) []auxUsage {
	out := make([]auxUsage, len(names))
	for i, name := range names {
		u := auxUsage{Name: name, CPU: -1}
		switch {
		case err0 != nil || err1 != nil:
			u.Unavailable = errors.Join(err0, err1).Error()
		case len(start[i]) == 0 && len(end[i]) == 0:
			u.Unavailable = "no process named " + name
		default:
			seen := map[int]bool{}
			for pid := range start[i] {
				seen[pid] = true
			}
			for pid := range end[i] {
				seen[pid] = true
			}
			u.Processes, u.CPU = len(seen), procsCPU(start[i], end[i])
		}
		out[i] = u
	}
	return out
}

// pidList is the repeatable --server-pid flag.
type pidList []int

func (l *pidList) String() string {
	if l == nil {
		return ""
	}
	parts := make([]string, len(*l))
	for i, p := range *l {
		parts[i] = strconv.Itoa(p)
	}
	return strings.Join(parts, ",")
}

func (l *pidList) Set(v string) error {
	p, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || p <= 0 {
		return fmt.Errorf("%q is not a process id", v)
	}
	*l = append(*l, p)
	return nil
}

// processesCPU returns the CPU time of each process and their sum.
func processesCPU(pids []int) (each []time.Duration, sum time.Duration, err error) {
	each = make([]time.Duration, len(pids))
	for i, pid := range pids {
		if each[i], err = processCPU(pid); err != nil {
			return nil, -1, fmt.Errorf("cannot read the CPU time of process %d: %w", pid, err)
		}
		sum += each[i]
	}
	return each, sum, nil
}

// The services count as settled once the last documents sent are final
// (their verdicts are asked for in about the order they were sent, 3 s
// after each submission) and their CPU time has then grown by less than
// their idle floor plus settleIdle per settleStep and replica for
// settleQuiet in a row. The floor is what the services spend idle, their
// timers and empty looks for due work (measured before the run: under 1%
// of a core built normally, ten times that with the race detector);
// settleIdle, 10% of one core each above it, lets the last verdicts'
// storing count.
const (
	settleStep  = 500 * time.Millisecond
	settleIdle  = settleStep / 10
	settleQuiet = time.Second
)

// idleFloor is the least CPU time the services used in a settleStep over
// two of them, with nothing asked of them: their own background work.
func idleFloor(ctx context.Context, pids []int) time.Duration {
	_, last, err := processesCPU(pids)
	if err != nil {
		return 0
	}
	floor := time.Duration(-1)
	for range 2 {
		select {
		case <-ctx.Done():
			return max(floor, 0)
		case <-time.After(settleStep):
		}
		_, now, err := processesCPU(pids)
		if err != nil {
			return max(floor, 0)
		}
		if d := now - last; floor < 0 || d < floor {
			floor = d
		}
		last = now
	}
	return floor
}

// waitSettled waits until final reports that the last documents sent are
// final and the services have been quiet (under floor plus settleIdle a
// replica, per settleStep) for settleQuiet since, or until limit. It
// returns how long they were still settling after the last call, and
// whether limit ran out first; the CPU figures read after it cover that
// and the quiet time.
func waitSettled(ctx context.Context, pids []int, floor, limit time.Duration, final func(context.Context) bool) (busy time.Duration, timedOut bool) {
	start := time.Now()
	_, last, err := processesCPU(pids)
	if err != nil {
		return 0, true
	}
	t := time.NewTicker(settleStep)
	defer t.Stop()
	quietSince := start
	for time.Since(start) < limit {
		select {
		case <-ctx.Done():
			return quietSince.Sub(start), true
		case <-t.C:
		}
		_, now, err := processesCPU(pids)
		if err != nil {
			return quietSince.Sub(start), true
		}
		busy := now-last >= floor+settleIdle*time.Duration(len(pids))
		last = now
		switch {
		case busy || !final(ctx):
			quietSince = time.Now()
		case time.Since(quietSince) >= settleQuiet:
			return quietSince.Sub(start), false
		}
	}
	return time.Since(start), true
}

// sentDoc is a document a measured send issued, and who may read it.
type sentDoc struct {
	c     *client.Client
	clave string
}

// lastSent keeps the documents sent last, up to lastSentKept.
type lastSent struct {
	mu   sync.Mutex
	docs []sentDoc
	next int
}

const lastSentKept = 32

func (l *lastSent) add(d sentDoc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.docs) < lastSentKept {
		l.docs = append(l.docs, d)
		return
	}
	l.docs[l.next] = d
	l.next = (l.next + 1) % lastSentKept
}

// lastFinal reports whether the documents sent last are all final (not 04
// or 05), reading them as stored: reading never asks the tax authority.
// Those found final are not read again.
func (lr *loadRun) lastFinal(ctx context.Context) bool {
	lr.last.mu.Lock()
	docs := slices.Clone(lr.last.docs)
	lr.last.mu.Unlock()
	pending := docs[:0]
	for _, d := range docs {
		a, err := d.c.Document(ctx, d.clave, client.CheckOptions{})
		if err != nil || a.Estado == client.EstadoSent || a.Estado == client.EstadoNotSentYet {
			pending = append(pending, d)
		}
	}
	lr.last.mu.Lock()
	lr.last.docs, lr.last.next = pending, 0
	lr.last.mu.Unlock()
	return len(pending) == 0
}
