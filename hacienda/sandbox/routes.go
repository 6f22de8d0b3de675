package sandbox

import (
	"context"
	"crypto/subtle"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"time"
)

func (s *Sandbox) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+s.tokenPath, s.faulty(s.idp.handleToken))
	mux.HandleFunc("POST "+s.logoutPath, s.faulty(s.idp.handleLogout))
	mux.HandleFunc("POST "+s.opts.BasePath+"/recepcion", s.faulty(s.handleSubmit))
	mux.HandleFunc("GET "+s.opts.BasePath+"/recepcion/{clave}", s.faulty(s.handleStatus))
	s.registryRoutes(mux)

	mux.HandleFunc("GET /_sandbox/faults", s.admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Faults())
	}))
	mux.HandleFunc("PUT /_sandbox/faults", s.admin(s.handleSetFaults))
	mux.HandleFunc("GET /_sandbox/processing-delay", s.admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"delay": s.ProcessingDelay().String()})
	}))
	mux.HandleFunc("PUT /_sandbox/processing-delay", s.admin(s.handleSetDelay))
	mux.HandleFunc("GET /_sandbox/stats", s.admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Stats())
	}))
	mux.HandleFunc("GET /_sandbox/received", s.admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Received())
	}))
	mux.HandleFunc("GET /_sandbox/calls", s.admin(s.handleCalls))
	mux.HandleFunc("GET /_sandbox/received/{key}/xml", s.admin(s.handleReceivedXML))
	mux.HandleFunc("POST /_sandbox/users", s.admin(s.handleAddUser))
	mux.HandleFunc("POST /_sandbox/revoke-tokens", s.admin(func(w http.ResponseWriter, r *http.Request) {
		s.RevokeTokens()
		w.WriteHeader(http.StatusNoContent)
	}))
	mux.HandleFunc("GET /_sandbox/certificate", s.admin(s.handleCertificate))
	return mux
}

// handleSetFaults is PUT /_sandbox/faults: the body replaces every knob.
func (s *Sandbox) handleSetFaults(w http.ResponseWriter, r *http.Request) {
	var f Faults
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "faults: " + err.Error()})
		return
	}
	if err := s.SetFaults(f); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	s.log.InfoContext(r.Context(), "sandbox faults replaced")
	writeJSON(w, http.StatusOK, s.Faults())
}

// handleSetDelay is PUT /_sandbox/processing-delay, {"delay": "2s"}.
func (s *Sandbox) handleSetDelay(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Delay string `json:"delay"`
	}
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&body)
	var d time.Duration
	if err == nil {
		d, err = time.ParseDuration(body.Delay)
	}
	if err == nil {
		err = s.SetProcessingDelay(d)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `want {"delay": "2s"}, a duration of zero or more`})
		return
	}
	s.log.InfoContext(r.Context(), "sandbox processing delay changed", "delay_s", d.Seconds())
	writeJSON(w, http.StatusOK, map[string]string{"delay": d.String()})
}

// handleReceivedXML is GET /_sandbox/received/{key}/xml: the document as
// received.
func (s *Sandbox) handleReceivedXML(w http.ResponseWriter, r *http.Request) {
	d, ok := s.Document(r.PathValue("key"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write(d.XML)
}

// handleAddUser is POST /_sandbox/users, {"username": ..., "password": ...}.
func (s *Sandbox) handleAddUser(w http.ResponseWriter, r *http.Request) {
	var u struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&u); err != nil || u.Username == "" || u.Password == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want {\"username\": ..., \"password\": ...}, both non-empty"})
		return
	}
	s.AddUser(u.Username, u.Password)
	w.WriteHeader(http.StatusNoContent)
}

// handleCertificate is GET /_sandbox/certificate: the PEM certificate the
// answers are signed with, when the signer has one.
func (s *Sandbox) handleCertificate(w http.ResponseWriter, r *http.Request) {
	c, ok := s.signer.(interface{ Certificate() *x509.Certificate })
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	_ = pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate().Raw})
}

// faulty wraps a token-service or reception-API handler with the outage
// and latency faults.
func (s *Sandbox) faulty(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if out, status := s.outage(); out || s.closed.Load() {
			s.stats.outageCuts.Add(1)
			if status != 0 && !s.closed.Load() {
				if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
					w.Header().Set("Retry-After", "1")
				}
				w.WriteHeader(status)
				return
			}
			s.cut(w, r, DropReset)
			return
		}
		// The time of arrival, before any added latency, for the call
		// record.
		r = r.WithContext(context.WithValue(r.Context(), arrivedKey{}, s.clock.Now()))
		s.sleep(r.Context(), s.latency())
		h(w, r)
	}
}

// arrivedKey is the context key of a call's time of arrival.
type arrivedKey struct{}

// arrivedAt is when r reached the sandbox (faulty records it), or now.
func (s *Sandbox) arrivedAt(r *http.Request) time.Time {
	if t, ok := r.Context().Value(arrivedKey{}).(time.Time); ok {
		return t
	}
	return s.clock.Now()
}

// admin guards a /_sandbox/ endpoint with Options.AdminToken when set.
func (s *Sandbox) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.AdminToken != "" && subtle.ConstantTimeCompare([]byte(bearer(r)), []byte(s.opts.AdminToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sandbox-admin"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "admin token required"})
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
