package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
)

// Party is an issuer or receiver identification as the API's JSON has it.
type Party struct {
	TipoIdentificacion   string `json:"tipoIdentificacion"`
	NumeroIdentificacion string `json:"numeroIdentificacion"`
}

// submitBody is POST /recepcion's JSON.
type submitBody struct {
	Clave               string `json:"clave"`
	Fecha               string `json:"fecha"`
	Emisor              *Party `json:"emisor"`
	Receptor            *Party `json:"receptor"`
	CallbackURL         string `json:"callbackUrl"`
	ConsecutivoReceptor string `json:"consecutivoReceptor"`
	ComprobanteXML      string `json:"comprobanteXml"`
}

// Received is a submission as the sandbox recorded it.
type Received struct {
	// Key is the status resource's key: the clave, or
	// clave-consecutivoReceptor for a receptor message.
	Key                 string    `json:"key"`
	Clave               string    `json:"clave"`
	Fecha               string    `json:"fecha"`
	Emisor              Party     `json:"emisor"`
	Receptor            *Party    `json:"receptor,omitempty"`
	CallbackURL         string    `json:"callbackUrl,omitempty"`
	ConsecutivoReceptor string    `json:"consecutivoReceptor,omitempty"`
	XML                 []byte    `json:"-"`
	User                string    `json:"user"`
	ReceivedAt          time.Time `json:"receivedAt"`
	// Dropped says the answer to the submission was lost on purpose.
	Dropped bool `json:"dropped,omitempty"`
	// Stuck says the document will stay procesando forever.
	Stuck bool `json:"stuck,omitempty"`
}

// document is a received document and its verdict.
type document struct {
	Received
	info   docInfo
	faults receiptFaults

	// posts counts the reception POSTs that carried the key (guarded by
	// the sandbox's docMu).
	posts int64

	// judgeMu guards the verdict: judged, estado, answer and detalle. A
	// document is judged once, unless keeping its verdict fails
	// (Options.Store): it is then judged again at the next query.
	judgeMu sync.Mutex
	judged  bool
	estado  string
	answer  []byte   // signed MensajeHacienda
	detalle []string // rejection reasons
	// credits are, for an accepted credit note a Store kept, what it
	// took from each document it references, by key: load takes it
	// again. A note judged since the start took it at its judging.
	credits map[string]decimal.Decimal

	// credited is what accepted credit notes took from this document's
	// total (guarded by the sandbox's refMu); it goes when the document
	// is forgotten.
	credited decimal.Decimal
}

// maxSubmission caps a submission's body: a v4.4 document with many lines
// and its signature, base64-encoded, stays well under it.
const maxSubmission = 16 << 20

// badRequest answers 400 with the reason in X-Error-Cause, as the tax
// authority does.
func (s *Sandbox) badRequest(w http.ResponseWriter, cause string) {
	s.refuse(w, http.StatusBadRequest, cause)
}

// refuse answers a refusal at reception with its status and the reason in
// X-Error-Cause.
func (s *Sandbox) refuse(w http.ResponseWriter, status int, cause string) {
	s.stats.badRequests.Add(1)
	w.Header().Set("X-Error-Cause", cause)
	w.WriteHeader(status)
}

// authorize checks the bearer token; it answers 401 itself.
func (s *Sandbox) authorize(w http.ResponseWriter, r *http.Request) (string, bool) {
	user, ok := s.idp.authenticate(bearer(r))
	if !ok {
		s.stats.unauthorized.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+s.opts.Realm+`"`)
		w.WriteHeader(http.StatusUnauthorized)
		return "", false
	}
	return user, true
}

// inject answers with an injected error status, if one is drawn.
func (s *Sandbox) inject(w http.ResponseWriter) bool {
	code, ra := s.injectedError()
	if code == 0 {
		return false
	}
	s.stats.injectedErrors.Add(1)
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterHeader(ra))
	}
	w.Header().Set("X-Error-Cause", fmt.Sprintf("Error %d inyectado por el ambiente de pruebas", code))
	w.WriteHeader(code)
	return true
}

func digits(s string, n int) bool {
	return len(s) == n && strings.Trim(s, "0123456789") == ""
}

func (s *Sandbox) handleSubmit(w http.ResponseWriter, r *http.Request) {
	if s.inject(w) {
		return
	}
	user, ok := s.authorize(w, r)
	if !ok {
		return
	}
	s.calls.add(user, s.arrivedAt(r), true)
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		s.refuse(w, http.StatusUnsupportedMediaType, "El tipo de contenido debe ser application/json.")
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSubmission))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		return // the client went away
	}
	var b submitBody
	if err := json.Unmarshal(raw, &b); err != nil {
		s.badRequest(w, "El cuerpo de la solicitud no es un JSON válido.")
		return
	}
	xml, cause := checkBody(&b)
	if cause != "" {
		s.badRequest(w, cause)
		return
	}
	in, err := readDoc(xml)
	if err != nil {
		s.badRequest(w, notWellFormed)
		return
	}
	if cause := checkAgainstXML(&b, in); cause != "" {
		s.badRequest(w, cause)
		return
	}
	isMR := in.typ.IsReceiverMessage()
	key := b.Clave
	if isMR {
		key += "-" + b.ConsecutivoReceptor
	}
	rf := s.receiptFaults(b.Clave)
	d := &document{
		Received: Received{
			Key: key, Clave: b.Clave, Fecha: b.Fecha, Emisor: *b.Emisor, Receptor: b.Receptor,
			CallbackURL: b.CallbackURL, ConsecutivoReceptor: b.ConsecutivoReceptor,
			XML: xml, User: user, ReceivedAt: s.clock.Now(),
			Dropped: rf.drop != "", Stuck: rf.stuck,
		},
		info:   in,
		faults: rf,
	}
	stored, prev, evicted := s.store(d)
	if !stored {
		s.stats.duplicates.Add(1)
		if prev != key {
			s.badRequest(w, fmt.Sprintf("El receptor %s ya envió un mensaje (%s) sobre el comprobante con clave %s.", in.receptorNumero, prev, b.Clave))
			return
		}
		s.badRequest(w, fmt.Sprintf("El comprobante con clave %s ya fue recibido anteriormente.", key))
		return
	}
	if err := s.keep(r.Context(), d, evicted); err != nil {
		// Not kept, not received: the sender tries again, as after any
		// fault of the tax authority's.
		s.log.ErrorContext(r.Context(), "sandbox: a received document could not be kept", "key", key, "err", err)
		s.unstore(d, evicted)
		w.Header().Set("Retry-After", "5")
		s.refuse(w, http.StatusServiceUnavailable, "El servicio de recepción no está disponible en este momento.")
		return
	}
	s.stats.submissions.Add(1)
	if rf.drop != "" {
		s.stats.dropped.Add(1)
		s.cut(w, r, rf.drop)
		return
	}
	if d.CallbackURL != "" {
		go s.callBack(d)
	}
	w.Header().Set("Location", location(r, s.opts.BasePath+"/recepcion/"+key))
	w.WriteHeader(http.StatusAccepted)
}

// location is the absolute URL of path on the server r reached.
func location(r *http.Request, path string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}

// store records d unless its key was received before, or, for a
// receiver's message, unless the same receiver already sent one about the
// same document; either way it counts the POST. When d is not stored it
// returns the key of the submission it repeats. evicted are the keys of
// the oldest documents forgotten to make room (Options.MaxDocuments), and
// of those the Store keeps past it (overflow).
func (s *Sandbox) store(d *document) (stored bool, prev string, evicted []string) {
	s.docMu.Lock()
	defer s.docMu.Unlock()
	if prev, dup := s.docs[d.Key]; dup {
		prev.posts++
		return false, d.Key, nil
	}
	rk := ""
	if d.info.typ.IsReceiverMessage() {
		rk = replyKey(d.Clave, d.info.receptorNumero)
		if prevKey, dup := s.replies[rk]; dup {
			if prev := s.docs[prevKey]; prev != nil {
				prev.posts++
				return false, prevKey, nil
			}
		}
		s.replies[rk] = d.Key
	}
	d.posts = 1
	s.docs[d.Key] = d
	s.order = append(s.order, d.Key)
	evicted, s.overflow = s.overflow, nil
	for len(s.order) > s.opts.MaxDocuments {
		if old := s.docs[s.order[0]]; old != nil && old.info.typ.IsReceiverMessage() {
			delete(s.replies, replyKey(old.Clave, old.info.receptorNumero))
		}
		delete(s.docs, s.order[0])
		evicted = append(evicted, s.order[0])
		s.order = s.order[1:]
	}
	return true, d.Key, evicted
}

// unstore takes back a document store recorded but the Store could not
// keep. The documents store forgot to make room (evicted) stay forgotten
// in memory, and are handed to the next receipt to forget in the Store,
// which still keeps them: else the file would hold them for good.
func (s *Sandbox) unstore(d *document, evicted []string) {
	s.docMu.Lock()
	defer s.docMu.Unlock()
	s.overflow = append(s.overflow, evicted...)
	if s.docs[d.Key] != d {
		return
	}
	delete(s.docs, d.Key)
	if d.info.typ.IsReceiverMessage() {
		rk := replyKey(d.Clave, d.info.receptorNumero)
		if s.replies[rk] == d.Key {
			delete(s.replies, rk)
		}
	}
	if i := slices.Index(s.order, d.Key); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
}

// keep writes a document just received, and forgets the evicted ones,
// through the Store; without one it does nothing.
func (s *Sandbox) keep(ctx context.Context, d *document, evicted []string) error {
	if s.opts.Store == nil {
		return nil
	}
	r, err := d.record()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return s.opts.Store.Receive(ctx, r, evicted)
}

func (s *Sandbox) lookup(key string) *document {
	s.docMu.RLock()
	defer s.docMu.RUnlock()
	return s.docs[key]
}

// cut loses the answer: the connection is closed without one (reset) or
// held until the client gives up (hang).
func (s *Sandbox) cut(w http.ResponseWriter, r *http.Request, mode string) {
	if mode == DropHang {
		s.sleep(r.Context(), 10*time.Minute)
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		// HTTP/2 and recorders cannot be hijacked: abort the handler, which
		// resets the stream.
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close with RST, as a crashed peer would
	}
	_ = conn.Close()
}

// statusBody is GET /recepcion/{clave}'s JSON, with the API's hyphenated
// names.
type statusBody struct {
	Clave        string `json:"clave"`
	Fecha        string `json:"fecha"`
	IndEstado    string `json:"ind-estado"`
	RespuestaXML string `json:"respuesta-xml,omitempty"`
}

func (s *Sandbox) handleStatus(w http.ResponseWriter, r *http.Request) {
	if s.inject(w) {
		return
	}
	user, ok := s.authorize(w, r)
	if !ok {
		return
	}
	s.calls.add(user, s.arrivedAt(r), false)
	s.stats.statusQueries.Add(1)
	key := r.PathValue("clave")
	clave, consecutivo, isMR := strings.Cut(key, "-")
	if !digits(clave, 50) || (isMR && !digits(consecutivo, 20)) {
		s.badRequest(w, "La clave debe tener 50 dígitos (o clave-consecutivoReceptor).")
		return
	}
	d := s.lookup(key)
	if d == nil {
		s.stats.notFound.Add(1)
		w.Header().Set("X-Error-Cause", fmt.Sprintf("El comprobante con clave %s no ha sido recibido.", key))
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.statusOf(r.Context(), key, d))
}

// statusOf is the status resource's answer about d, asked for by key (the
// clave, or clave-consecutivoReceptor).
func (s *Sandbox) statusOf(ctx context.Context, key string, d *document) statusBody {
	body := statusBody{Clave: key, Fecha: d.ReceivedAt.In(hacienda.CostaRica).Format(time.RFC3339)}
	body.IndEstado, body.RespuestaXML = s.state(ctx, d)
	return body
}

// state is a document's ind-estado and, once final, its base64 answer.
func (s *Sandbox) state(ctx context.Context, d *document) (string, string) {
	elapsed := s.clock.Now().Sub(d.ReceivedAt)
	delay := s.ProcessingDelay()
	switch {
	case d.faults.stuck:
		return "procesando", ""
	case elapsed < delay/2:
		return "recibido", ""
	case elapsed < delay:
		return "procesando", ""
	}
	d.judgeMu.Lock()
	defer d.judgeMu.Unlock()
	if !d.judged {
		s.judge(context.WithoutCancel(ctx), d)
	}
	switch {
	case !d.judged:
		// The verdict could not be kept: told at a later query.
		return "procesando", ""
	case d.answer == nil:
		return d.estado, ""
	}
	return d.estado, base64.StdEncoding.EncodeToString(d.answer)
}

// judge gives a document its verdict and signed answer, and keeps them
// through the Store; the caller holds d.judgeMu. When they cannot be kept,
// d stays unjudged and a credit note gives back what it took.
func (s *Sandbox) judge(ctx context.Context, d *document) {
	lines := consistency(d.info)
	lines = append(lines, s.timely(d)...)
	checks := []Check{s.checks.Schema, s.checks.Signature, s.checks.Totals}
	if d.info.typ.IsReceiverMessage() {
		// The v4.4 model covers the issued documents; a receptor message
		// is checked for consistency, signature and against the document
		// it answers.
		checks = []Check{s.checks.Signature}
		lines = append(lines, s.answered(ctx, d)...)
	} else if s.opts.RegistryChecks {
		lines = append(lines, registryFindings(d.info)...)
	}
	for _, c := range checks {
		lines = append(lines, runCheck(ctx, c, d.XML, d.info)...)
	}
	lines = append(lines, d.faults.rejected...)
	lines, credits := s.judgeReferences(d, lines)
	accepted := len(lines) == 0
	v := Verdict{Estado: "rechazado", Detalle: lines}
	if accepted {
		v.Estado = "aceptado"
	}
	answer, err := s.answer(d, accepted, lines)
	if err != nil {
		s.log.ErrorContext(ctx, "sandbox could not sign its answer", "clave", d.Key, "err", err)
		s.takeBack(credits)
		credits = nil
		v = Verdict{Estado: "error"}
	}
	v.Answer = answer
	for ref, amount := range credits {
		if v.Credits == nil {
			v.Credits = map[string]string{}
		}
		v.Credits[ref.Key] = amount.String()
	}
	if s.opts.Store != nil {
		kctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := s.opts.Store.Judge(kctx, d.Key, v)
		cancel()
		if err != nil {
			s.log.ErrorContext(ctx, "sandbox: a verdict could not be kept; it is given at a later query", "key", d.Key, "err", err)
			s.takeBack(credits)
			return
		}
	}
	d.judged, d.estado, d.answer, d.detalle = true, v.Estado, v.Answer, v.Detalle
	switch v.Estado {
	case "aceptado":
		s.stats.accepted.Add(1)
	case "rechazado":
		s.stats.rejected.Add(1)
	}
}

// judgeReferences adds the findings of a note's or a payment receipt's
// references to lines and, when a credit note is accepted with them,
// records what it credits, in one hold of refMu, so that two credit notes
// judged at once cannot both take the same balance. Other documents do
// not take the lock.
func (s *Sandbox) judgeReferences(d *document, lines []string) ([]string, map[*document]decimal.Decimal) {
	if !d.info.typ.Note && d.info.typ.Code != hacienda.TypeREP {
		return lines, nil
	}
	s.refMu.Lock()
	defer s.refMu.Unlock()
	refLines, credits := s.references(d)
	lines = append(lines, refLines...)
	if len(lines) > 0 {
		return lines, nil
	}
	for ref, amount := range credits {
		ref.credited = ref.credited.Add(amount)
	}
	return lines, credits
}

// takeBack returns credits recorded by judgeReferences for a note whose
// answer could not be made.
func (s *Sandbox) takeBack(credits map[*document]decimal.Decimal) {
	if len(credits) == 0 {
		return
	}
	s.refMu.Lock()
	defer s.refMu.Unlock()
	for ref, amount := range credits {
		ref.credited = ref.credited.Sub(amount)
	}
}

// Received returns the recorded submissions in arrival order (without
// their XML; see Document).
func (s *Sandbox) Received() []Received {
	s.docMu.RLock()
	defer s.docMu.RUnlock()
	out := make([]Received, 0, len(s.order))
	for _, k := range s.order {
		r := s.docs[k].Received
		r.XML = nil
		out = append(out, r)
	}
	return out
}

// Document returns one recorded submission, its XML included.
func (s *Sandbox) Document(key string) (Received, bool) {
	d := s.lookup(key)
	if d == nil {
		return Received{}, false
	}
	return d.Received, true
}
