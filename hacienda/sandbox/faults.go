package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// Duration is a time.Duration written in JSON as Go writes durations
// ("250ms", "1.5s"). A JSON number is read as seconds.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads "250ms" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return errors.New("a duration is a string such as \"250ms\" or a number of seconds")
	}
	*d = Duration(f * float64(time.Second))
	return nil
}

// Drop modes: how the answer to a recorded submission is lost.
const (
	// DropReset closes the connection without an answer.
	DropReset = "reset"
	// DropHang holds the connection without an answer until the client
	// gives up.
	DropHang = "hang"
)

// Faults are the failures the sandbox injects. The zero value injects
// nothing. They apply to the token service and the reception API, never to
// the /_sandbox/ endpoints; the registry endpoints have faults of their own
// (RegistryStatus, RegistryLatency).
type Faults struct {
	// Latency is added before every answer (token service included), plus
	// a uniformly random extra up to LatencyJitter.
	Latency       Duration `json:"latency,omitempty"`
	LatencyJitter Duration `json:"latencyJitter,omitempty"`

	// ErrorRates maps an HTTP status (400–599) to the probability (0–1)
	// that a reception-API call is answered with it, before the sandbox
	// looks at the request (nothing is recorded). 429 and 503 carry
	// Retry-After.
	ErrorRates map[int]float64 `json:"errorRates,omitempty"`
	// RetryAfter is the Retry-After of injected 429 and 503 answers.
	// Default 1s.
	RetryAfter Duration `json:"retryAfter,omitempty"`

	// DropRate is the probability that a valid submission is recorded (the
	// document IS received) but its answer is lost, as DropMode says.
	DropRate float64 `json:"dropRate,omitempty"`
	// DropMode is DropReset (default) or DropHang.
	DropMode string `json:"dropMode,omitempty"`

	// TokenRefusal, when set, is the status (400–599) the token service
	// answers every grant with: 401 and 400 look like refused credentials
	// (invalid_grant, as the identity provider answers when its user store
	// fails too), 503 like a service down (temporarily_unavailable).
	TokenRefusal int `json:"tokenRefusal,omitempty"`

	// CallbackDropRate is the probability that a received document's
	// callback is never posted (a callback lost on the way): the document
	// is judged as usual and its status answers with the verdict.
	CallbackDropRate float64 `json:"callbackDropRate,omitempty"`

	// StuckRate is the probability that a received document stays
	// procesando forever; StuckClaves are claves that do, whatever the rate.
	StuckRate   float64  `json:"stuckRate,omitempty"`
	StuckClaves []string `json:"stuckClaves,omitempty"`

	// Outage cuts every call of the token service and the reception API:
	// the connection is closed without an answer, or answered with
	// OutageStatus when that is set.
	Outage       bool `json:"outage,omitempty"`
	OutageStatus int  `json:"outageStatus,omitempty"`

	// RejectNext makes the next N received documents end rechazado, and
	// RejectClaves (a regular expression) every document whose clave
	// matches; RejectDetail are the DetalleMensaje lines they get (a
	// generic line when empty). The count goes down as documents arrive.
	RejectNext   int      `json:"rejectNext,omitempty"`
	RejectClaves string   `json:"rejectClaves,omitempty"`
	RejectDetail []string `json:"rejectDetail,omitempty"`

	// RegistryStatus, when set (400–599), answers every call of the
	// registry endpoints with that status in the registry's error form
	// ({"code": 503, "status": "Service unavailable"} for a 503).
	// RegistryLatency is added before every registry answer: longer than
	// a client's timeout, the registry stalls. Neither touches the token
	// service or the reception API, nor do their faults touch the
	// registry.
	RegistryStatus  int      `json:"registryStatus,omitempty"`
	RegistryLatency Duration `json:"registryLatency,omitempty"`

	rejectRE *regexp.Regexp
}

func (f *Faults) validate() error {
	for code, p := range f.ErrorRates {
		if code < 400 || code > 599 {
			return fmt.Errorf("fault errorRates: status %d: want 400-599", code)
		}
		if p < 0 || p > 1 {
			return fmt.Errorf("fault errorRates[%d]: probability %v: want 0-1", code, p)
		}
	}
	var sum float64
	for _, p := range f.ErrorRates {
		sum += p
	}
	if sum > 1 {
		return fmt.Errorf("fault errorRates: probabilities add up to %v, more than 1", sum)
	}
	for name, p := range map[string]float64{"dropRate": f.DropRate, "stuckRate": f.StuckRate, "callbackDropRate": f.CallbackDropRate} {
		if p < 0 || p > 1 {
			return fmt.Errorf("fault %s %v: want 0-1", name, p)
		}
	}
	if f.Latency < 0 || f.LatencyJitter < 0 || f.RetryAfter < 0 {
		return errors.New("fault durations must not be negative")
	}
	switch f.DropMode {
	case "", DropReset, DropHang:
	default:
		return fmt.Errorf("fault dropMode %q: want %q or %q", f.DropMode, DropReset, DropHang)
	}
	if f.TokenRefusal != 0 && (f.TokenRefusal < 400 || f.TokenRefusal > 599) {
		return fmt.Errorf("fault tokenRefusal %d: want 400-599", f.TokenRefusal)
	}
	if f.OutageStatus != 0 && (f.OutageStatus < 400 || f.OutageStatus > 599) {
		return fmt.Errorf("fault outageStatus %d: want 400-599", f.OutageStatus)
	}
	if f.RegistryStatus != 0 && (f.RegistryStatus < 400 || f.RegistryStatus > 599) {
		return fmt.Errorf("fault registryStatus %d: want 400-599", f.RegistryStatus)
	}
	if f.RegistryLatency < 0 {
		return errors.New("fault registryLatency must not be negative")
	}
	if f.RejectNext < 0 {
		return errors.New("fault rejectNext must not be negative")
	}
	f.rejectRE = nil
	if f.RejectClaves != "" {
		re, err := regexp.Compile(f.RejectClaves)
		if err != nil {
			return fmt.Errorf("fault rejectClaves: %w", err)
		}
		f.rejectRE = re
	}
	return nil
}

func (f Faults) clone() Faults {
	c := f
	if f.ErrorRates != nil {
		c.ErrorRates = make(map[int]float64, len(f.ErrorRates))
		for k, v := range f.ErrorRates {
			c.ErrorRates[k] = v
		}
	}
	c.StuckClaves = append([]string(nil), f.StuckClaves...)
	c.RejectDetail = append([]string(nil), f.RejectDetail...)
	return c
}

// MarshalJSON writes errorRates with string keys, as JSON needs.
func (f Faults) MarshalJSON() ([]byte, error) {
	type plain Faults
	p := plain(f)
	rates := map[string]float64{}
	for k, v := range f.ErrorRates {
		rates[strconv.Itoa(k)] = v
	}
	p.ErrorRates = nil
	out := struct {
		plain
		ErrorRates map[string]float64 `json:"errorRates,omitempty"`
	}{p, rates}
	return json.Marshal(out)
}

// SetFaults replaces the injected faults.
func (s *Sandbox) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return err
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults = f.clone()
	s.faults.rejectRE = f.rejectRE
	return nil
}

// Faults returns the faults in force.
func (s *Sandbox) Faults() Faults {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	c := s.faults.clone()
	c.rejectRE = s.faults.rejectRE
	return c
}

// latency is the wait before an answer.
func (s *Sandbox) latency() time.Duration {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	d := time.Duration(s.faults.Latency)
	if j := int64(s.faults.LatencyJitter); j > 0 {
		d += time.Duration(s.rng.Int64N(j + 1))
	}
	return d
}

// outage says whether the call is cut, and with which status (0: no
// answer at all).
func (s *Sandbox) outage() (bool, int) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return s.faults.Outage, s.faults.OutageStatus
}

// injectedError draws the status an API call is answered with, 0 for none.
func (s *Sandbox) injectedError() (int, time.Duration) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	if len(s.faults.ErrorRates) == 0 {
		return 0, 0
	}
	codes := make([]int, 0, len(s.faults.ErrorRates))
	for c := range s.faults.ErrorRates {
		codes = append(codes, c)
	}
	sort.Ints(codes) // map order is random; the draw must not be
	x := s.rng.Float64()
	for _, c := range codes {
		p := s.faults.ErrorRates[c]
		if x < p {
			ra := time.Duration(s.faults.RetryAfter)
			if ra == 0 {
				ra = time.Second
			}
			return c, ra
		}
		x -= p
	}
	return 0, 0
}

// registryFaults are the registry endpoints' injected status (0 for
// none) and latency.
func (s *Sandbox) registryFaults() (int, time.Duration) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return s.faults.RegistryStatus, time.Duration(s.faults.RegistryLatency)
}

// tokenRefusal is the status the token service refuses with, 0 for none.
func (s *Sandbox) tokenRefusal() int {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return s.faults.TokenRefusal
}

// receiptFaults are the faults decided for one received document.
type receiptFaults struct {
	drop       string // "" or a drop mode
	stuck      bool
	noCallback bool     // the callback is lost
	rejected   []string // forced rejection lines; nil for none
}

func (s *Sandbox) receiptFaults(clave string) receiptFaults {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	f := &s.faults
	var r receiptFaults
	if f.DropRate > 0 && s.rng.Float64() < f.DropRate {
		r.drop = f.DropMode
		if r.drop == "" {
			r.drop = DropReset
		}
	}
	if f.CallbackDropRate > 0 && s.rng.Float64() < f.CallbackDropRate {
		r.noCallback = true
	}
	if f.StuckRate > 0 && s.rng.Float64() < f.StuckRate {
		r.stuck = true
	}
	for _, c := range f.StuckClaves {
		if c == clave {
			r.stuck = true
		}
	}
	reject := false
	if f.RejectNext > 0 {
		f.RejectNext--
		reject = true
	}
	if f.rejectRE != nil && f.rejectRE.MatchString(clave) {
		reject = true
	}
	if reject {
		r.rejected = append([]string(nil), f.RejectDetail...)
		if len(r.rejected) == 0 {
			r.rejected = []string{"Rechazo forzado en el ambiente de pruebas."}
		}
	}
	return r
}
