package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The summary of `loadgen --json`: the report's figures in fixed
// units (seconds, milliseconds, calls a second), so that a script can
// compare runs. A figure that was not measured is null.

type loadSummary struct {
	Mode        string  `json:"mode"`
	URLs        int     `json:"urls"`
	Companies   int     `json:"companies"`
	Workers     int     `json:"workers"`
	Rate        float64 `json:"rate_per_s"` // 0: closed loop
	StoppedBy   string  `json:"stopped_by"`
	WarmupCalls int     `json:"warmup_calls"`

	DurationS    float64           `json:"duration_s"`
	Requests     int               `json:"requests"`
	OK           int               `json:"ok"`
	Sends        int               `json:"sends"` // documents sent and answered (send mode)
	Throughput   float64           `json:"throughput_per_s"`
	Late         int               `json:"late_arrivals"` // open loop: calls due with no free worker
	LatencyMS    latencySummary    `json:"latency_ms"`
	Statuses     map[string]int    `json:"statuses"`
	Errors       map[string]int    `json:"errors"`
	ErrorSamples map[string]string `json:"error_samples"`
	Estados      map[string]int    `json:"estados"`
	Check        *checkSummary     `json:"check,omitempty"`

	LoadgenCPUS float64  `json:"loadgen_cpu_s"`
	ServiceCPUS *float64 `json:"service_cpu_s"`
	// Each --server-pid's, in order; the settling after the last call,
	// which the CPU figures include.
	ServiceCPUPerReplicaS  []float64 `json:"service_cpu_per_replica_s"`
	SettledS               float64   `json:"settled_s"`
	SettleTimedOut         bool      `json:"settle_timed_out"`
	ServiceCPUPerRequestMS *float64  `json:"service_cpu_per_request_ms"`
	MachineBusyS           *float64  `json:"machine_busy_s"`
	MachineBusyPct         *float64  `json:"machine_busy_pct"` // of cores × duration
	Cores                  int       `json:"cores"`
	// The raw RSA-2048 signature (--server-pid) measured after the run and
	// during it, and the ratio: its CPU time (the one during the run when
	// known) divided by the service's CPU time per request.
	RSASignCPUMS       *float64 `json:"rsa_sign_cpu_ms"`
	RSASignCPUDuringMS *float64 `json:"rsa_sign_cpu_during_ms"`
	RSARatio           *float64 `json:"rsa_ratio"`
	RSARatioAfter      *float64 `json:"rsa_ratio_after"`
	// The two signatures are more than 1.5 times apart: the machine's
	// speed or its CPU accounting changed, and the ratio is not to be
	// compared with other runs'.
	RSAReferencesDisagree bool `json:"rsa_references_disagree"`
	// The --aux-process names, in their order.
	AuxProcesses []auxSummary `json:"aux_processes"`
}

type auxSummary struct {
	Name            string   `json:"name"`
	Processes       int      `json:"processes"`
	CPUS            *float64 `json:"cpu_s"`
	CPUPerRequestMS *float64 `json:"cpu_per_request_ms"`
	Unavailable     string   `json:"unavailable,omitempty"` // why cpu_s is null
}

type latencySummary struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

type checkSummary struct {
	Checks      int            `json:"checks"`
	Final       map[string]int `json:"final"`
	NotFinal    int            `json:"not_final"`
	CheckErrors map[string]int `json:"check_errors"`
	ToFinalMS   latencySummary `json:"to_final_ms"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (p percentiles) summary() latencySummary {
	return latencySummary{P50: ms(p.P50), P90: ms(p.P90), P99: ms(p.P99), P999: ms(p.P999), Max: ms(p.Max)}
}

// known is v, or nil (null) when it was not measured.
func known(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

func (r loadReport) summary() loadSummary {
	s := loadSummary{
		Mode: r.Mode, URLs: r.URLs, Companies: r.Companies, Workers: r.Workers, Rate: r.Rate,
		StoppedBy: r.StoppedBy, WarmupCalls: r.Warmup,
		DurationS: r.Elapsed.Seconds(), Requests: r.Requests, OK: r.OK, Throughput: r.Throughput(),
		Late: r.Late, LatencyMS: r.Latency.summary(),
		Statuses: r.Statuses, Errors: r.Errors, ErrorSamples: r.Samples, Estados: r.Estados,
		LoadgenCPUS: r.ClientCPU.Seconds(), Cores: r.Cores,
	}
	if r.Mode == "send" {
		s.Sends = r.OK
	}
	if r.Checks > 0 || r.Final != nil {
		s.Check = &checkSummary{Checks: r.Checks, Final: r.Final, NotFinal: r.NotFinal,
			CheckErrors: r.CheckErrors, ToFinalMS: r.ToFinal.summary()}
	}
	s.ServiceCPUS = known(r.ServerCPU.Seconds(), r.ServerCPU >= 0)
	s.ServiceCPUPerReplicaS = []float64{}
	for _, d := range r.ServerCPUs {
		s.ServiceCPUPerReplicaS = append(s.ServiceCPUPerReplicaS, d.Seconds())
	}
	s.SettledS, s.SettleTimedOut = r.Settled.Seconds(), r.SettleTimedOut
	s.ServiceCPUPerRequestMS = known(ms(r.serverCPUPerRequest()), r.serverCPUPerRequest() >= 0)
	s.MachineBusyS = known(r.MachineBusy.Seconds(), r.MachineBusy >= 0)
	s.MachineBusyPct = known(100*r.MachineBusy.Seconds()/max(float64(r.Cores)*r.cpuWindow().Seconds(), 1e-9), r.MachineBusy >= 0)
	s.RSASignCPUMS = known(ms(r.RSASign), r.RSASign >= 0)
	s.RSASignCPUDuringMS = known(ms(r.RSASignDuring), r.RSASignDuring >= 0)
	s.RSARatio = known(r.rsaRatio())
	s.RSARatioAfter = known(r.ratioTo(r.RSASign))
	s.RSAReferencesDisagree = r.rsaReferencesDisagree()
	s.AuxProcesses = []auxSummary{}
	for _, a := range r.Aux {
		per := a.perRequest(r.Requests)
		s.AuxProcesses = append(s.AuxProcesses, auxSummary{Name: a.Name, Processes: a.Processes,
			CPUS: known(a.CPU.Seconds(), a.CPU >= 0), CPUPerRequestMS: known(ms(per), per >= 0), Unavailable: a.Unavailable})
	}
	return s
}

// jsonOut is where --json goes: standard output, or a temporary file
// beside the one named, renamed over it once the summary is written, so
// that a failed run leaves neither half a file nor a stale one in its
// place looking new.
type jsonOut struct {
	w    io.Writer
	f    *os.File // nil: standard output
	path string
}

// openJSONOut prepares the --json output; it is nil when there is none.
func openJSONOut(path string, stdout io.Writer) (*jsonOut, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		return &jsonOut{w: stdout}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("--json %s: %w", path, err)
	}
	return &jsonOut{w: f, f: f, path: path}, nil
}

// write writes the summary of r and puts the file in place.
func (j *jsonOut) write(r loadReport) error {
	if j == nil {
		return nil
	}
	enc := json.NewEncoder(j.w)
	enc.SetIndent("", "  ")
	err := enc.Encode(r.summary())
	if j.f == nil {
		return err
	}
	if err == nil {
		err = j.f.Chmod(0o644) // a summary, not a secret: as a shell redirection would make it
	}
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(j.f.Name(), j.path)
	}
	if err != nil {
		return fmt.Errorf("--json %s: %w", j.path, err)
	}
	j.f = nil
	return nil
}

// discard removes the temporary file of a summary not written.
func (j *jsonOut) discard() {
	if j != nil && j.f != nil {
		j.f.Close()
		os.Remove(j.f.Name())
	}
}
