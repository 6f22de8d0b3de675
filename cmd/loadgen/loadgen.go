package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"facturad/cmd/internal/cmdline"
	"facturad/gateway/client"
	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/signer/certmint"
	"facturad/tenant"
)

// Bounds a load run may not exceed.
const (
	loadMaxCount     = 10_000_000
	loadMaxDuration  = time.Hour
	loadMaxWorkers   = 1024
	loadMaxCompanies = 1000
	loadMaxURLs      = 64
	loadMaxRate      = 1_000_000 // calls a second
	loadMaxAux       = 16
)

// loadOptions configure one load run.
type loadOptions struct {
	// URLs are the base URLs of the service's replicas: the warm-up and
	// measured calls go to each in turn, the setup to the first.
	URLs                                 []string
	AdminUser, AdminPassword, AdminToken string
	// Mode is "send" (documents) or "read" (GET of the company's branches).
	Mode      string
	Companies int
	// Workers is the most calls in flight at once, in every phase.
	Workers int
	// Rate, when positive, makes the run an open loop: measured call i is
	// due at the start plus i/Rate seconds, whether or not the calls
	// before it have returned, and its latency counts from then. Zero is
	// a closed loop: each worker makes its next call when the last returns.
	Rate float64
	// Count and Duration bound the measured calls; at least one is set and
	// the run stops at whichever comes first.
	Count    int
	Duration time.Duration
	// MaxTime is the hard stop of the whole run, setup included.
	MaxTime time.Duration
	// Warmup is how many unmeasured calls each company gets first, so that
	// the caches (credentials, certificate, tax-authority token) are warm.
	Warmup int
	// Check polls each sent document until the tax authority's verdict is
	// final, for at most CheckTimeout.
	Check        bool
	CheckTimeout time.Duration
	// RequestTimeout bounds one HTTP call.
	RequestTimeout time.Duration
	Seed           int64
	RunID          string
	AllowRemote    bool
	// ServerPIDs, when set, are the service's processes (one per
	// replica): their CPU time over the measured run is reported, in all
	// and each (Linux /proc only).
	ServerPIDs []int
	// Settle, with ServerPIDs in send mode, is how long to wait at most
	// after the last call for the services to go idle (the background
	// worker settling the documents' verdicts), so that their CPU time
	// covers each document from send to verdict. 0 stops at the last call.
	Settle time.Duration
	// RSAReference, with ServerPIDs, measures a raw RSA-2048 signature's
	// CPU time in this process after the run, to set the service's CPU
	// per document against.
	RSAReference bool
	// AuxProcesses are command names (as in /proc/<pid>/comm) of other
	// processes whose CPU time over the measured run is reported, such as
	// postgres and redis-server (Linux /proc only).
	AuxProcesses []string
	// Progress is how often a progress line goes to the log (0: never).
	Progress time.Duration
	// JSON, when set, is the file the summary is also written to as JSON;
	// "-" is standard output (the text then goes to standard error).
	JSON string
}

func (o *loadOptions) validate() error {
	var errs []error
	switch o.Mode {
	case "send", "read":
	default:
		errs = append(errs, fmt.Errorf("mode: %q is not send or read", o.Mode))
	}
	if o.AdminUser == "" || o.AdminPassword == "" || o.AdminToken == "" {
		errs = append(errs, errors.New("admin credentials: --admin-user, --admin-password and --admin-token (or FACTURAD_ADMIN_USER, _PASSWORD, _TOKEN) are required"))
	}
	if o.Settle < 0 || (o.Settle > 0 && o.Settle < 2*settleQuiet) {
		errs = append(errs, fmt.Errorf("settle: 0 (no wait) or at least %s (the services must stay quiet for %s)", 2*settleQuiet, settleQuiet))
	}
	if o.Companies < 1 || o.Companies > loadMaxCompanies {
		errs = append(errs, fmt.Errorf("companies: must be 1 to %d", loadMaxCompanies))
	}
	if o.Workers < 1 || o.Workers > loadMaxWorkers {
		errs = append(errs, fmt.Errorf("workers: must be 1 to %d", loadMaxWorkers))
	}
	if math.IsNaN(o.Rate) || o.Rate < 0 || o.Rate > loadMaxRate {
		errs = append(errs, fmt.Errorf("rate: must be 0 (closed loop) to %g calls a second", float64(loadMaxRate)))
	}
	if o.Count == 0 && o.Duration == 0 {
		errs = append(errs, errors.New("no bound: give --count, --duration or both"))
	}
	if o.Count < 0 || o.Count > loadMaxCount {
		errs = append(errs, fmt.Errorf("count: must be 0 to %d", loadMaxCount))
	}
	if o.Duration < 0 || o.Duration > loadMaxDuration {
		errs = append(errs, fmt.Errorf("duration: must be 0 to %s", loadMaxDuration))
	}
	if o.MaxTime <= 0 || o.MaxTime > 2*loadMaxDuration {
		errs = append(errs, fmt.Errorf("max-time: must be positive and at most %s", 2*loadMaxDuration))
	}
	if o.Warmup < 0 || o.Warmup > 1000 {
		errs = append(errs, errors.New("warmup: must be 0 to 1000 per company"))
	}
	if o.RequestTimeout <= 0 || o.CheckTimeout <= 0 {
		errs = append(errs, errors.New("request-timeout and check-timeout: must be positive"))
	}
	if o.Check && o.Mode != "send" {
		errs = append(errs, errors.New("check: only with --mode send"))
	}
	if o.RunID == "" || len(o.RunID) > 40 || strings.Trim(o.RunID, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		errs = append(errs, errors.New("run-id: 1 to 40 letters, digits, '-' or '_'"))
	}
	if len(o.URLs) == 0 || len(o.URLs) > loadMaxURLs {
		errs = append(errs, fmt.Errorf("url: give 1 to %d", loadMaxURLs))
	}
	for _, u := range o.URLs {
		if err := checkTarget(u, o.AllowRemote); err != nil {
			errs = append(errs, err)
		}
	}
	if len(o.AuxProcesses) > loadMaxAux {
		errs = append(errs, fmt.Errorf("aux-process: at most %d names", loadMaxAux))
	}
	for _, name := range o.AuxProcesses {
		// The kernel keeps 15 bytes of a command name.
		if name == "" || len(name) > 15 || strings.ContainsAny(name, "/\n") {
			errs = append(errs, fmt.Errorf("aux-process: %q is not a process name of 1 to 15 bytes", name))
		}
	}
	return errors.Join(errs...)
}

// checkTarget accepts an http(s) URL on a loopback address, or any host
// when allowRemote is set. Names other than localhost are not resolved: a
// load run against a remote host must be asked for explicitly.
func checkTarget(raw string, allowRemote bool) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url: %q is not an http(s) URL", raw)
	}
	if allowRemote {
		return nil
	}
	host := u.Hostname()
	if cmdline.LoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("url: %s is not a loopback address; load is only sent elsewhere with --allow-remote", host)
}

// listFlag is a repeatable flag: the first time it is given its value
// replaces the default, each further one is added.
type listFlag struct {
	values []string
	set    bool
}

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.values, " ")
}

func (l *listFlag) Set(v string) error {
	if !l.set {
		l.values, l.set = nil, true
	}
	l.values = append(l.values, v)
	return nil
}

// run is the command without the process: main calls it with the
// command line's arguments (the command's name left out), and tests call
// it too. A load that failed, or options it refuses, are its error; main
// prints it after "loadgen: ".
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	o, err := parseLoadgenArgs(args, stdout, stderr, getenv)
	if err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return fmt.Errorf("options:\n%w", err)
	}
	// The JSON file is opened first: a path that cannot be written fails
	// the run before it starts, not after.
	js, err := openJSONOut(o.JSON, stdout)
	if err != nil {
		return err
	}
	defer js.discard()
	r, err := loadgen(ctx, o, stderr)
	if err != nil {
		return err
	}
	if o.JSON == "-" {
		r.print(stderr)
	} else {
		r.print(stdout)
	}
	return js.write(r)
}

// parseLoadgenArgs reads the options of a run from its flags and the
// environment, not yet validated.
func parseLoadgenArgs(args []string, stdout, stderr io.Writer, getenv func(string) string) (loadOptions, error) {
	fs := cmdline.New("loadgen", "", "load a running facturad service and report its throughput", stdout, stderr)
	o := loadOptions{}
	urls := &listFlag{values: []string{"http://127.0.0.1:8080"}}
	fs.Var(urls, "url", "base URL of the running service; repeat it for several replicas, which the calls go to in turn")
	fs.Env("url", "FACTURAD_LOADGEN_URL")
	fs.StringVar(&o.AdminUser, "admin-user", tenant.DefaultAdminUser, "admin API user")
	fs.Env("admin-user", "FACTURAD_ADMIN_USER")
	fs.StringVar(&o.AdminPassword, "admin-password", "", "admin password (prefer the environment variable to the flag)")
	fs.Env("admin-password", "FACTURAD_ADMIN_PASSWORD")
	fs.StringVar(&o.AdminToken, "admin-token", "", "admin API token (prefer the environment variable to the flag)")
	fs.Env("admin-token", "FACTURAD_ADMIN_TOKEN")
	fs.StringVar(&o.Mode, "mode", "send", "send (documents) or read (GET /api/companies/{companyId}/branches/v4)")
	fs.IntVar(&o.Companies, "companies", 20, "companies to create; calls go to them in turn")
	fs.IntVar(&o.Workers, "workers", 8, "concurrent callers (with --rate, the most calls in flight)")
	fs.Float64Var(&o.Rate, "rate", 0, "open loop: calls a second, each due at its time and timed from it (0: closed loop, each worker calls when its last call returns)")
	fs.IntVar(&o.Count, "count", 0, "measured calls to make (0: bounded by --duration only)")
	fs.DurationVar(&o.Duration, "duration", 0, "how long to make calls (0: bounded by --count only)")
	fs.DurationVar(&o.MaxTime, "max-time", 10*time.Minute, "hard stop of the whole run, setup included")
	fs.IntVar(&o.Warmup, "warmup", 1, "unmeasured calls per company before measuring")
	fs.BoolVar(&o.Check, "check", false, "check each sent document until its state is final")
	fs.DurationVar(&o.CheckTimeout, "check-timeout", 30*time.Second, "how long one document may take to become final")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", 30*time.Second, "bound of one HTTP call")
	fs.Int64Var(&o.Seed, "seed", 7, "seed of the generated documents")
	fs.StringVar(&o.RunID, "run-id", "", "prefix of the id_externo values")
	fs.DefaultIs("run-id", "random")
	fs.BoolVar(&o.AllowRemote, "allow-remote", false, "allow a target that is not a loopback address")
	fs.Var((*pidList)(&o.ServerPIDs), "server-pid", "process id of the service, to report its CPU time (Linux); repeat it for each replica")
	fs.DurationVar(&o.Settle, "settle", time.Minute, "with --server-pid in send mode: after the last call, wait up to this long for the services to go idle, so that their CPU covers every verdict (0: stop at the last call)")
	aux := &listFlag{}
	fs.Var(aux, "aux-process", "name of other processes (as in /proc/<pid>/comm: postgres, redis-server) whose CPU time over the run to report; repeat it for several (Linux)")
	fs.BoolVar(&o.RSAReference, "rsa-reference", true, "with --server-pid: measure a raw RSA-2048 signature's CPU time here, during the run and after it, and report the service's CPU per document against it")
	fs.DurationVar(&o.Progress, "progress", 5*time.Second, "interval of the progress lines on stderr (0: none)")
	fs.StringVar(&o.JSON, "json", "", "also write the summary as JSON to this file (-: to stdout, the text then to stderr)")
	fs.DefaultIs("json", "none")
	if err := fs.ParseEnv(args, getenv); err != nil {
		return o, err
	}
	o.URLs, o.AuxProcesses = urls.values, aux.values
	if o.RunID == "" {
		b := make([]byte, 4)
		if _, err := rand.Read(b); err != nil {
			return o, fmt.Errorf("run id: %w", err)
		}
		o.RunID = "lg" + hex.EncodeToString(b)
	}
	return o, nil
}

// loadReport is the outcome of a run.
type loadReport struct {
	Mode      string
	URLs      int // replicas called in turn
	Companies int
	Workers   int
	Rate      float64 // of the open loop; 0: closed loop
	// Late is how many calls of the open loop found no free worker when
	// they were due; their wait for one is in their latency.
	Late      int
	StoppedBy string // "count", "duration" or "max-time"
	Warmup    int    // unmeasured calls made first

	Requests int // measured calls completed
	OK       int
	Statuses map[string]int    // by HTTP status, or "timeout", "transport", "cancelled"
	Errors   map[string]int    // by "status mensaje_api_key" (or "status field" for 400s)
	Samples  map[string]string // first body (truncated) of each error kind
	Estados  map[string]int    // estado of the successful sends
	Elapsed  time.Duration
	Latency  percentiles

	// Check mode.
	Checks      int            // check calls made
	Final       map[string]int // final estado of the checked documents
	NotFinal    int            // documents still not final at their timeout
	CheckErrors map[string]int
	ToFinal     percentiles // from the send call's start to the final answer

	ClientCPU  time.Duration   // of this process over the measured run
	ServerCPU  time.Duration   // of the --server-pid processes over the measured run and the settling; -1 unknown
	ServerCPUs []time.Duration // each --server-pid's, in order; -1 unknown
	// Settled is how long the services took to go idle after the last
	// call (--settle); SettleTimedOut says they had not when it ran out.
	Settled        time.Duration
	SettleTimedOut bool
	SettleWait     time.Duration // all the time waited, the quiet end included
	Aux            []auxUsage    // of the --aux-process names over the measured run
	// RSASign is the CPU time of a raw RSA-2048 signature measured in this
	// process after the run; -1 not measured.
	RSASign time.Duration
	// RSASignDuring is the same measured while the load ran, on one thread
	// (the median of RSASamples batches); -1 not measured. The ratio is
	// taken with it when it is known, since it shares the run's
	// conditions.
	RSASignDuring time.Duration
	RSASamples    int
	// MachineBusy is the busy time of all the machine's cores over the
	// measured run (-1 unknown), out of Cores × Elapsed: what neither this
	// process nor the service used went to other processes.
	MachineBusy time.Duration
	Cores       int
}

type percentiles struct{ P50, P90, P99, P999, Max time.Duration }

func percentilesOf(d []time.Duration) percentiles {
	if len(d) == 0 {
		return percentiles{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration {
		i := int(q*float64(len(d))+0.5) - 1
		return d[max(0, min(i, len(d)-1))]
	}
	return percentiles{P50: at(0.50), P90: at(0.90), P99: at(0.99), P999: at(0.999), Max: d[len(d)-1]}
}

func (p percentiles) String() string {
	r := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
	}
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s", r(p.P50), r(p.P90), r(p.P99), r(p.P999), r(p.Max))
}

// serverCPUPerRequest is the service's CPU time over the run divided by
// the measured calls, or -1 when it is unknown.
func (r loadReport) serverCPUPerRequest() time.Duration {
	if r.ServerCPU < 0 || r.Requests == 0 {
		return -1
	}
	return r.ServerCPU / time.Duration(r.Requests)
}

// rsaRatio is the raw RSA signature's CPU time divided by the service's
// CPU time per request, when both are known: the signature measured during
// the run, or after it when that one is unknown.
func (r loadReport) rsaRatio() (float64, bool) {
	if r.RSASignDuring >= 0 {
		return r.ratioTo(r.RSASignDuring)
	}
	return r.ratioTo(r.RSASign)
}

// rsaReferencesDisagree says the raw signature measured during the run and
// the one measured after it are both known and more than 1.5 times apart.
// The same code on the same machine should cost about the same. One
// benchmark run measured 0.27 ms during the run and 0.97 ms after it (Go's
// RSA cannot sign in 0.27 ms on that machine), and gave a ratio of 0.11
// beside runs of 0.30.
func (r loadReport) rsaReferencesDisagree() bool {
	if r.RSASignDuring <= 0 || r.RSASign <= 0 {
		return false
	}
	lo, hi := min(r.RSASignDuring, r.RSASign), max(r.RSASignDuring, r.RSASign)
	return hi > lo*3/2
}

// ratioTo is rsa divided by the service's CPU time per request.
func (r loadReport) ratioTo(rsa time.Duration) (float64, bool) {
	per := r.serverCPUPerRequest()
	if rsa < 0 || per <= 0 {
		return 0, false
	}
	return float64(rsa) / float64(per), true
}

// Throughput is the successful measured calls per second.
func (r loadReport) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

func (r loadReport) print(w io.Writer) {
	unit := "sends/s"
	if r.Mode == "read" {
		unit = "reads/s"
	}
	fmt.Fprintf(w, "mode:        %s, %d companies, %d workers, stopped by %s\n", r.Mode, r.Companies, r.Workers, r.StoppedBy)
	if r.Rate > 0 {
		fmt.Fprintf(w, "arrivals:    open loop at %g/s, latency from each call's due time; %d late (no free worker)\n", r.Rate, r.Late)
	}
	if r.URLs > 1 {
		fmt.Fprintf(w, "targets:     %d URLs, called in turn (setup on the first)\n", r.URLs)
	}
	fmt.Fprintf(w, "warm-up:     %d calls (not measured)\n", r.Warmup)
	fmt.Fprintf(w, "requests:    %d (ok %d, errors %d) in %s\n", r.Requests, r.OK, r.Requests-r.OK, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "statuses:    %s\n", counts(r.Statuses))
	fmt.Fprintf(w, "throughput:  %.1f %s\n", r.Throughput(), unit)
	fmt.Fprintf(w, "latency:     %s\n", r.Latency)
	if r.Mode == "send" {
		fmt.Fprintf(w, "estados:     %s\n", counts(r.Estados))
	}
	fmt.Fprintf(w, "errors:      %s\n", counts(r.Errors))
	for _, k := range sortedKeys(r.Samples) {
		fmt.Fprintf(w, "  %s: %s\n", k, r.Samples[k])
	}
	if r.Checks > 0 || r.Final != nil {
		fmt.Fprintf(w, "check:       %d calls, final %s, not final %d, check errors %s\n", r.Checks, counts(r.Final), r.NotFinal, counts(r.CheckErrors))
		fmt.Fprintf(w, "to final:    %s\n", r.ToFinal)
	}
	r.printCPU(w)
}

// cpuWindow is the time the CPU figures cover: the run and the wait for
// the services to settle.
func (r loadReport) cpuWindow() time.Duration { return r.Elapsed + r.SettleWait }

// printCPU writes the CPU part of the report: this process's, the
// service's, the raw RSA reference, the other processes', the machine's.
func (r loadReport) printCPU(w io.Writer) {
	cpu := func(d time.Duration) string {
		return fmt.Sprintf("%.1fs (%.0f%% of one core)", d.Seconds(), 100*d.Seconds()/max(r.cpuWindow().Seconds(), 1e-9))
	}
	server := "unknown (give --server-pid)"
	if r.ServerCPU >= 0 {
		server = cpu(r.ServerCPU)
	}
	if per := r.serverCPUPerRequest(); per >= 0 {
		server += fmt.Sprintf(", %.3f ms per request", ms(per))
	}
	fmt.Fprintf(w, "cpu:         loadgen %s, server %s\n", cpu(r.ClientCPU), server)
	if len(r.ServerCPUs) > 1 {
		each := make([]string, len(r.ServerCPUs))
		for i, d := range r.ServerCPUs {
			each[i] = fmt.Sprintf("%.1fs", d.Seconds())
		}
		fmt.Fprintf(w, "replicas:    %s\n", strings.Join(each, ", "))
	}
	if r.Settled > 0 || r.SettleTimedOut {
		how := "went idle"
		if r.SettleTimedOut {
			how = "were still busy (--settle ran out)"
		}
		fmt.Fprintf(w, "settle:      the services %s %s after the last call; the CPU figures include that time\n", how, r.Settled.Round(time.Millisecond))
	}
	if r.RSASign >= 0 || r.RSASignDuring >= 0 {
		ratio := func(rsa time.Duration) string {
			if v, ok := r.ratioTo(rsa); ok {
				return strconv.FormatFloat(v, 'f', 3, 64)
			}
			return "unknown"
		}
		doc := "document"
		if r.Mode == "read" {
			doc = "request"
		}
		if r.RSASignDuring >= 0 {
			fmt.Fprintf(w, "rsa:         raw RSA-2048 sign CPU %.3f ms during the run (median of %d batches); ratio (RSA ÷ service CPU per %s) %s\n",
				ms(r.RSASignDuring), r.RSASamples, doc, ratio(r.RSASignDuring))
		}
		if r.RSASign >= 0 {
			fmt.Fprintf(w, "rsa:         raw RSA-2048 sign CPU %.3f ms after the run; ratio (RSA ÷ service CPU per %s) %s\n", ms(r.RSASign), doc, ratio(r.RSASign))
		}
		if r.rsaReferencesDisagree() {
			fmt.Fprintf(w, "rsa:         warning: the signature during the run and after it differ by more than half; "+
				"the machine's speed or its CPU accounting changed, so do not compare this run's ratio with others\n")
		}
	}
	for _, a := range r.Aux {
		if a.CPU < 0 {
			fmt.Fprintf(w, "aux:         %s unavailable (%s)\n", a.Name, a.Unavailable)
			continue
		}
		per := "unknown"
		if d := a.perRequest(r.Requests); d >= 0 {
			per = fmt.Sprintf("%.3f ms", ms(d))
		}
		procs := "processes"
		if a.Processes == 1 {
			procs = "process"
		}
		fmt.Fprintf(w, "aux:         %s %s, %s per request, %d %s\n", a.Name, cpu(a.CPU), per, a.Processes, procs)
	}
	if r.MachineBusy >= 0 {
		fmt.Fprintf(w, "machine:     %d cores, %.0f%% busy over the run (all processes)\n", r.Cores,
			100*r.MachineBusy.Seconds()/max(float64(r.Cores)*r.cpuWindow().Seconds(), 1e-9))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}

func newLoadHTTP(workers int, timeout time.Duration) *http.Client {
	t := &http.Transport{
		Proxy:               nil, // the target was checked; never go through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2*workers + 8,
		MaxIdleConnsPerHost: 2*workers + 8,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{
		Transport: t,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // stay on the checked target
		},
	}
}

// newLoadClient is the service's client at base through hc, speaking for
// creds. It never retries: a refusal (429, 503) is an outcome the run
// counts, not something to hide.
func newLoadClient(hc *http.Client, base string, creds client.Credentials) (*client.Client, error) {
	c, err := client.New(base, client.WithHTTPClient(hc), client.WithRetry(client.RetryPolicy{MaxAttempts: 1}),
		client.WithUserAgent("facturad-loadgen"))
	if err != nil {
		return nil, err
	}
	return c.As(creds), nil
}

// loadCompany is a created company and its first branch's API user, with
// a client of that user on each URL of the run.
type loadCompany struct {
	id int64
	on []*client.Client // by index of the run's URLs
}

// createLoadCompany creates one company with a minted certificate, and its
// user's clients on bases.
func createLoadCompany(ctx context.Context, admin *client.Client, hc *http.Client, bases []string, ca *certmint.CA, ident, runID string) (loadCompany, error) {
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: ident, Name: "EMPRESA DE CARGA " + ident, PIN: "1234",
		CA: ca, Key: certmint.TestKey(0),
	})
	if err != nil {
		return loadCompany{}, err
	}
	created, err := admin.CreateCompany(ctx, client.CompanyForm{
		TipoIdentificacion: "02", Identificacion: ident, RazonSocial: "Empresa de carga " + runID + " " + ident + " S.A.",
		ActividadComercial: "620100", UsuarioHacienda: "cpj-" + ident + "@stag.comprobanteselectronicos.go.cr",
		ContrasenaHacienda: "clave-de-carga", TipoCliente: "01", RazonComercial: "Carga " + ident,
		Provincia: "1", Canton: "01", Distrito: "01", OtrasSenas: "Prueba de carga", CodPais: "506",
		Telefono: "22223333", CorreoElectronico: "carga@example.com", Sucursal: "001",
		FacturacionElectronica: true, Certificado: m.P12, CertificadoNombre: ident + ".p12", Clave: "1234",
	})
	var ae *client.Error
	switch {
	case errors.As(err, &ae):
		return loadCompany{}, fmt.Errorf("create company %s: status %d: %w", ident, ae.StatusCode, err)
	case err != nil:
		return loadCompany{}, fmt.Errorf("create company %s: %w", ident, err)
	case created.CompaniaID == 0 || created.APIToken == "":
		return loadCompany{}, fmt.Errorf("create company %s: an answer without company or credentials", ident)
	}
	c := loadCompany{id: created.CompaniaID}
	for _, base := range bases {
		cl, err := newLoadClient(hc, base, created.Credentials())
		if err != nil {
			return loadCompany{}, err
		}
		c.on = append(c.on, cl)
	}
	return c, nil
}

func truncate(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// sendTemplates are generated requests marshalled once, split around their
// id_externo so that each call only concatenates.
type sendTemplate struct{ head, tail []byte }

const idMarker = "ID-EXTERNO-MARKER"

func sendTemplates(seed int64) ([]sendTemplate, error) {
	// 40 consecutive generated requests cover every feature of the
	// generator and every document type but the notes and the payment
	// receipts: each is accepted only when it refers to a document the tax
	// authority received, and a synthetic load would credit one invoice
	// many times over (the sandbox rejects that as the real service does).
	var out []sendTemplate
	for _, r := range sample.Requests(seed, 40) {
		if t := hacienda.DocumentType(r.TipoDocumento.Code()); t.IsNote() || t == hacienda.TypeREP {
			continue
		}
		r.IDExterno = idMarker
		r.FechaEmision = "" // the service stamps the time of sending
		r.Clave = ""        // and numbers the document
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		head, tail, ok := bytes.Cut(b, []byte(`"`+idMarker+`"`))
		if !ok {
			return nil, errors.New("generated request without id_externo")
		}
		out = append(out, sendTemplate{head: head, tail: tail})
	}
	return out, nil
}

func (t sendTemplate) body(id string) []byte {
	b := make([]byte, 0, len(t.head)+len(t.tail)+len(id)+2)
	b = append(b, t.head...)
	b = strconv.AppendQuote(b, id)
	return append(b, t.tail...)
}

// loadTally collects outcomes from the workers.
type loadTally struct {
	mu          sync.Mutex
	requests    int
	ok          int
	statuses    map[string]int
	errors      map[string]int
	samples     map[string]string
	estados     map[string]int
	latencies   []time.Duration
	checks      int
	final       map[string]int
	notFinal    int
	checkErrors map[string]int
	toFinal     []time.Duration
}

func newLoadTally() *loadTally {
	return &loadTally{statuses: map[string]int{}, errors: map[string]int{}, samples: map[string]string{}, estados: map[string]int{},
		final: map[string]int{}, checkErrors: map[string]int{}}
}

// errorKind names a failed call: its status and, when the answer says,
// the mensaje_api_key or the first invalid field; or what became of a call
// without an answer.
func errorKind(err error) string {
	var (
		ae *client.Error
		ne net.Error
		se *json.SyntaxError
		ue *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &ae):
		if ae.Document != nil && ae.Document.MensajeAPIKey != "" {
			return fmt.Sprintf("%d %s", ae.StatusCode, ae.Document.MensajeAPIKey)
		}
		if len(ae.Fields) > 0 {
			return fmt.Sprintf("%d %s", ae.StatusCode, sortedKeys(ae.Fields)[0])
		}
		return strconv.Itoa(ae.StatusCode)
	case errors.As(err, &se) || errors.As(err, &ue) || errors.Is(err, errUnreadableSend):
		return "200 unreadable answer"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	default:
		return "transport"
	}
}

// statusKind is what a call's status counts under: its HTTP status, or
// what became of a call without an answer.
func statusKind(err error) string {
	var (
		ae *client.Error
		se *json.SyntaxError
		ue *json.UnmarshalTypeError
	)
	switch {
	case err == nil, errors.As(err, &se), errors.As(err, &ue), errors.Is(err, errUnreadableSend):
		return "200"
	case errors.As(err, &ae):
		return strconv.Itoa(ae.StatusCode)
	default:
		return errorKind(err)
	}
}

func (t *loadTally) fail(kind string, err error) {
	t.errors[kind]++
	if _, ok := t.samples[kind]; !ok {
		t.samples[kind] = truncate([]byte(err.Error()), 200)
	}
}

// loadgen runs the load described by o (validated) and returns its report.
// Setup and warm-up progress go to log.
func loadgen(ctx context.Context, o loadOptions, log io.Writer) (loadReport, error) {
	ctx, cancel := context.WithTimeout(ctx, o.MaxTime)
	defer cancel()
	hc := newLoadHTTP(o.Workers, o.RequestTimeout)
	defer hc.CloseIdleConnections()
	lr := &loadRun{o: o, log: log}
	for _, u := range o.URLs {
		lr.bases = append(lr.bases, strings.TrimRight(u, "/"))
	}
	admin, err := newLoadClient(hc, lr.bases[0], client.Credentials{Usuario: o.AdminUser, Contrasena: o.AdminPassword, APIToken: o.AdminToken})
	if err != nil {
		return loadReport{}, err
	}
	if o.Mode == "send" {
		if lr.templates, err = sendTemplates(o.Seed); err != nil {
			return loadReport{}, err
		}
	}

	if o.Mode == "send" && o.Settle > 0 && len(o.ServerPIDs) > 0 {
		// Before anything is asked of the services: what they spend idle.
		lr.idleFloor = idleFloor(ctx, o.ServerPIDs)
	}
	start := time.Now()
	companies, err := createLoadCompanies(ctx, admin, hc, lr.bases, o)
	if err != nil {
		return loadReport{}, err
	}
	lr.companies = companies
	fmt.Fprintf(log, "loadgen: %d companies created in %s\n", o.Companies, time.Since(start).Round(time.Millisecond))

	warm, err := lr.warmUp(ctx)
	if err != nil {
		return loadReport{}, err
	}
	var sampler *rsaSampler
	if len(o.ServerPIDs) > 0 && o.RSAReference {
		sampler = startRSASampler(rsaSampleEvery)
	}
	r := lr.measure(ctx)
	r.Warmup = warm
	r.RSASignDuring = -1
	if sampler != nil {
		if r.RSASignDuring, r.RSASamples, err = sampler.Stop(); err != nil {
			fmt.Fprintf(log, "loadgen: %v\n", err)
		}
	}
	if len(o.ServerPIDs) > 0 && o.RSAReference && r.StoppedBy != "max-time" {
		if r.RSASign, err = rawRSASignCPU(); err != nil {
			fmt.Fprintf(log, "loadgen: %v\n", err)
			r.RSASign = -1
		}
	}
	if r.StoppedBy == "max-time" {
		return r, fmt.Errorf("stopped by --max-time (%s) before the count or duration was reached", o.MaxTime)
	}
	return r, nil
}

// loadRun is one load run once set up: its options, its companies and the
// generated requests, and the counters its workers share.
type loadRun struct {
	o loadOptions
	// idleFloor is what the services spent idle in a settleStep before
	// the run (see waitSettled).
	idleFloor time.Duration
	log       io.Writer
	templates []sendTemplate
	companies []loadCompany
	bases     []string // of the URLs, called in turn

	// The measured run.
	tally     *loadTally
	next      atomic.Int64 // index of the next call (closed loop)
	done      atomic.Int64 // calls completed
	late      atomic.Int64 // open-loop calls that found no free worker
	last      lastSent     // the documents sent last, for --settle
	stoppedBy atomic.Value // the first bound reached
	deadline  time.Time    // zero: no --duration
}

// createLoadCompanies creates the companies of a run, at most o.Workers at
// a time (each costs a certificate check and a password hash on the
// server), like every other phase of the run.
func createLoadCompanies(ctx context.Context, admin *client.Client, hc *http.Client, bases []string, o loadOptions) ([]loadCompany, error) {
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		return nil, fmt.Errorf("setup: test CA: %w", err)
	}
	base, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	companies := make([]loadCompany, o.Companies)
	err = forEachBounded(len(companies), o.Workers, func(i int) error {
		ident := fmt.Sprintf("3101%06d", (base.Int64()+int64(i))%1_000_000)
		c, err := createLoadCompany(ctx, admin, hc, bases, ca, ident, o.RunID)
		companies[i] = c
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	return companies, nil
}

// forEachBounded calls f(0) to f(n-1) from goroutines, at most limit at a
// time. Once a call has failed no further call starts; the errors of the
// calls made are returned joined.
func forEachBounded(n, limit int, f func(i int) error) error {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []error
		failed atomic.Bool
	)
	sem := make(chan struct{}, max(limit, 1))
	for i := 0; i < n && !failed.Load(); i++ {
		sem <- struct{}{}
		if failed.Load() {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(i); err != nil {
				failed.Store(true)
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// call makes one call, on the URL of index u: a send or a read for
// company c, with id_externo id; i picks the generated request. A send
// answers with its document.
func (lr *loadRun) call(ctx context.Context, c loadCompany, u, i int, id string) (*client.Document, error) {
	if lr.o.Mode == "read" {
		_, err := c.on[u].ListBranches(ctx, c.id)
		return nil, err
	}
	return c.on[u].SendJSON(ctx, lr.templates[i%len(lr.templates)].body(id), true, client.SendOptions{})
}

// warmUp makes the unmeasured calls, each of which must succeed, at most
// o.Workers at a time, and returns how many it made. Each company gets
// o.Warmup calls on each URL, since each replica has caches of its own.
func (lr *loadRun) warmUp(ctx context.Context) (int, error) {
	warm, n := 0, len(lr.companies)*len(lr.bases)
	for round := 0; round < lr.o.Warmup; round++ {
		err := forEachBounded(n, lr.o.Workers, func(k int) error {
			ci := k % len(lr.companies)
			c := lr.companies[ci]
			id := fmt.Sprintf("%s-w%d-%d", lr.o.RunID, round, k)
			if _, err := lr.call(ctx, c, k/len(lr.companies), ci+round, id); err != nil {
				return fmt.Errorf("warm-up call of company %d: %w", c.id, err)
			}
			return nil
		})
		if err != nil {
			return warm, err
		}
		warm += n
	}
	return warm, nil
}

// measure makes the measured calls from o.Workers workers until a bound
// stops them, and returns the report (without the warm-up count).
func (lr *loadRun) measure(ctx context.Context) loadReport {
	lr.tally = newLoadTally()
	runStart := time.Now()
	if lr.o.Duration > 0 {
		lr.deadline = runStart.Add(lr.o.Duration)
	}
	cpu0 := readCPUStart(lr.o.ServerPIDs, lr.o.AuxProcesses, lr.log)

	stopProgress := make(chan struct{})
	if lr.o.Progress > 0 {
		go lr.progress(runStart, stopProgress)
	}

	if lr.o.Rate > 0 {
		lr.openLoop(ctx, runStart)
	} else {
		var wg sync.WaitGroup
		for w := 0; w < lr.o.Workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lr.worker(ctx)
			}()
		}
		wg.Wait()
	}
	elapsed := time.Since(runStart)
	close(stopProgress)
	var settled time.Duration
	timedOut := false
	settleStart := time.Now()
	if lr.o.Mode == "send" && lr.o.Settle > 0 && cpu0.server >= 0 {
		settled, timedOut = waitSettled(ctx, lr.o.ServerPIDs, lr.idleFloor, lr.o.Settle, lr.lastFinal)
	}
	r := lr.report(elapsed, cpu0)
	r.Settled, r.SettleTimedOut, r.SettleWait = settled, timedOut, time.Since(settleStart)
	return r
}

// progress writes a progress line to the log every o.Progress until stop
// is closed.
func (lr *loadRun) progress(runStart time.Time, stop <-chan struct{}) {
	tk := time.NewTicker(lr.o.Progress)
	defer tk.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tk.C:
			el := time.Since(runStart)
			n := lr.done.Load()
			fmt.Fprintf(lr.log, "loadgen: %s: %d calls, %.1f/s\n", el.Round(time.Second), n, float64(n)/el.Seconds())
		}
	}
}

// worker makes measured calls of the closed loop until a bound stops it.
func (lr *loadRun) worker(ctx context.Context) {
	var wt workerTimes
	defer wt.addTo(lr.tally)
	for {
		i, ok := lr.nextCall(ctx)
		if !ok {
			return
		}
		lr.serve(ctx, i, time.Now(), &wt)
	}
}

// workerTimes are one worker's latencies, added to the tally at its end.
type workerTimes struct{ lat, fin []time.Duration }

func (wt *workerTimes) addTo(t *loadTally) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.latencies = append(t.latencies, wt.lat...)
	t.toFinal = append(t.toFinal, wt.fin...)
}

// serve makes measured call i, due at at, and checks the sent document
// when asked to; its latency and its time to a final answer count from at.
func (lr *loadRun) serve(ctx context.Context, i int, at time.Time, wt *workerTimes) {
	c := lr.companies[i%len(lr.companies)].on[i%len(lr.bases)]
	id := lr.o.RunID + "-" + strconv.Itoa(i)
	doc, err := lr.call(ctx, lr.companies[i%len(lr.companies)], i%len(lr.bases), i, id)
	wt.lat = append(wt.lat, time.Since(at))
	lr.done.Add(1)
	okCall := lr.record(doc, err)
	if okCall && lr.o.Mode == "send" {
		lr.last.add(sentDoc{c, doc.Clave})
	}
	if okCall && lr.o.Check {
		if checkUntilFinal(ctx, c, doc.Clave, lr.o.CheckTimeout, lr.tally) {
			wt.fin = append(wt.fin, time.Since(at))
		}
	}
}

// nextCall returns the index of the next measured call, or false when the
// hard time limit, the duration or the count stops the run (the first
// bound reached is noted in stoppedBy).
func (lr *loadRun) nextCall(ctx context.Context) (int, bool) {
	i := int(lr.next.Add(1) - 1)
	return i, lr.arrives(ctx, i, time.Now())
}

// record adds the outcome of one measured call to the tally and reports
// whether it succeeded; a send succeeds only with a readable document.
func (lr *loadRun) record(doc *client.Document, err error) bool {
	if err == nil && lr.o.Mode == "send" && (doc == nil || len(doc.Clave) != 50) {
		err = errUnreadableSend
	}
	tally := lr.tally
	tally.mu.Lock()
	defer tally.mu.Unlock()
	tally.requests++
	tally.statuses[statusKind(err)]++
	if err != nil {
		tally.fail(errorKind(err), err)
		return false
	}
	tally.ok++
	if lr.o.Mode == "send" {
		tally.estados[doc.Estado]++
	}
	return true
}

// errUnreadableSend is a send answered 200 without a document's clave.
var errUnreadableSend = errors.New("an answer without a 50-digit clave")

// cpuStart holds the CPU time counters at the start of the measured run.
type cpuStart struct {
	client     time.Duration
	machine    time.Duration
	cores      int
	machineErr error
	server     time.Duration   // the sum of servers; -1 unknown
	servers    []time.Duration // each --server-pid's
	aux        []procSnapshot
	auxErr     error
}

// readCPUStart reads the CPU time of this process, of the machine, of the
// --aux-process processes and of the --server-pid processes; what
// it cannot read of the service it says in log.
func readCPUStart(serverPIDs []int, auxNames []string, log io.Writer) cpuStart {
	var s cpuStart
	if len(auxNames) > 0 {
		s.aux, s.auxErr = snapshotProcs(auxNames)
	}
	s.client, _ = selfCPU()
	s.machine, s.cores, s.machineErr = machineBusy()
	s.server = -1
	if len(serverPIDs) > 0 {
		var err error
		if s.servers, s.server, err = processesCPU(serverPIDs); err != nil {
			fmt.Fprintf(log, "loadgen: %v\n", err)
		}
	}
	return s
}

// report puts together the report of the measured run from the tally and
// the CPU time used since cpu0.
func (lr *loadRun) report(elapsed time.Duration, cpu0 cpuStart) loadReport {
	o, tally := lr.o, lr.tally
	r := loadReport{
		Mode: o.Mode, URLs: len(o.URLs), Companies: o.Companies, Workers: o.Workers, Rate: o.Rate, Late: int(lr.late.Load()),
		Requests: tally.requests, OK: tally.ok, Statuses: tally.statuses, Errors: tally.errors, Samples: tally.samples,
		Estados: tally.estados, Elapsed: elapsed, Latency: percentilesOf(tally.latencies),
		Checks: tally.checks, NotFinal: tally.notFinal, CheckErrors: tally.checkErrors,
		ToFinal: percentilesOf(tally.toFinal), ServerCPU: -1, MachineBusy: -1, RSASign: -1, RSASignDuring: -1,
	}
	if machine1, _, err := machineBusy(); err == nil && cpu0.machineErr == nil {
		r.MachineBusy, r.Cores = machine1-cpu0.machine, cpu0.cores
	}
	if o.Check {
		r.Final = tally.final
	}
	if s, ok := lr.stoppedBy.Load().(string); ok {
		r.StoppedBy = s
	}
	if d, err := selfCPU(); err == nil {
		r.ClientCPU = d - cpu0.client
	}
	if cpu0.server >= 0 {
		if each, sum, err := processesCPU(o.ServerPIDs); err == nil {
			r.ServerCPU = sum - cpu0.server
			for i := range each {
				r.ServerCPUs = append(r.ServerCPUs, each[i]-cpu0.servers[i])
			}
		}
	}
	if len(o.AuxProcesses) > 0 {
		aux1, err := snapshotProcs(o.AuxProcesses)
		r.Aux = auxUsages(o.AuxProcesses, cpu0.aux, aux1, cpu0.auxErr, err)
	}
	return r
}

// checkUntilFinal polls the check call until the document's state is final
// (neither 04 Sent nor 05 not sent yet) or timeout passes, and reports
// whether it became final.
func checkUntilFinal(ctx context.Context, c *client.Client, clave string, timeout time.Duration, tally *loadTally) bool {
	start := time.Now()
	wait := 5 * time.Millisecond
	for {
		d, err := c.Check(ctx, clave, client.CheckOptions{})
		final := false
		tally.mu.Lock()
		tally.checks++
		if err != nil {
			tally.checkErrors[errorKind(err)]++
		} else if d.Estado != client.EstadoSent && d.Estado != client.EstadoNotSentYet {
			tally.final[d.Estado]++
			final = true
		}
		tally.mu.Unlock()
		if final {
			return true
		}
		if time.Since(start)+wait > timeout || ctx.Err() != nil {
			tally.mu.Lock()
			tally.notFinal++
			tally.mu.Unlock()
			return false
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// processCPU is the user and system CPU time of a process, from Linux's
// /proc.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	_, t, err := parseProcStat(b)
	return t.own, err
}

// machineBusy is the busy (not idle, not waiting for I/O) time of all the
// machine's cores since boot and their count, from Linux's /proc/stat.
func machineBusy() (time.Duration, int, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	var busy int64
	cores := 0
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			cores++
			continue
		}
		// user nice system idle iowait irq softirq [steal ...]
		for i, v := range f[1:] {
			if i == 3 || i == 4 || i >= 7 { // idle, iowait; steal is not ours; guest is already in user
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, 0, errors.New("unreadable /proc/stat")
			}
			busy += n
		}
		found = true
	}
	if !found || cores == 0 {
		return 0, 0, errors.New("unreadable /proc/stat")
	}
	return time.Duration(busy) * (time.Second / 100), cores, nil
}
