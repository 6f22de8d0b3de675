package recepcion

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"facturad/hacienda"
	"facturad/signer"
)

// Client talks to the tax authority's token service and reception API. It
// is safe for concurrent use; one Client serves every company.
type Client struct {
	opts    Options
	ep      Endpoints
	hc      *http.Client
	log     *slog.Logger
	clock   Clock
	metrics *metrics
	tokens  *tokenCache
}

// New checks the options and returns a Client.
func New(o Options) (*Client, error) {
	ep, err := o.resolve()
	if err != nil {
		return nil, fmt.Errorf("tax-authority client: %w", err)
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, fmt.Errorf("tax-authority client: %w", err)
	}
	c := &Client{
		opts:    o,
		ep:      ep,
		hc:      o.HTTPClient,
		log:     o.Logger.With("component", "hacienda", "environment", string(o.Environment)),
		clock:   o.Clock,
		metrics: m,
	}
	c.tokens = &tokenCache{c: c, sessions: map[int64]*session{}}
	return c, nil
}

// Endpoints returns where the client sends its calls.
func (c *Client) Endpoints() Endpoints { return c.ep }

// Environment returns the environment the client was configured for.
func (c *Client) Environment() Environment { return c.opts.Environment }

// Close ends the companies' sessions at the token service (logout), as the
// tax authority asks of well-behaved clients. The Client stays usable: a
// later call logs in again.
func (c *Client) Close(ctx context.Context) error {
	return c.tokens.logout(ctx)
}

// Party identifies the issuer or the receiver of a document in a
// submission.
type Party struct {
	// TipoIdentificacion is the v4.4 code: 01 física, 02 jurídica, 03
	// DIMEX, 04 NITE.
	TipoIdentificacion string `json:"tipoIdentificacion"`
	// NumeroIdentificacion is the id as written in the XML (digits, not
	// padded).
	NumeroIdentificacion string `json:"numeroIdentificacion"`
}

// Submission is one signed document to hand to the tax authority.
type Submission struct {
	// Clave is the document's 50-digit clave.
	Clave string
	// Fecha is the document's FechaEmision; it is sent in Costa Rica's
	// offset (-06:00).
	Fecha time.Time
	// Emisor is the document's issuer, as in its XML.
	Emisor Party
	// Receptor is the document's identified receiver; nil when it has none
	// (or when its id does not fit the API's 12 characters).
	Receptor *Party
	// CallbackURL overrides Options.CallbackURL for this document.
	CallbackURL string
	// ConsecutivoReceptor is set only for a MensajeReceptor: its 20-digit
	// NumeroConsecutivoReceptor.
	ConsecutivoReceptor string
	// SignedXML is the exact signed document; it is sent base64-encoded,
	// byte for byte.
	SignedXML []byte
}

// submitBody is the JSON of POST /recepcion (names as the API spells them).
type submitBody struct {
	Clave               string `json:"clave"`
	Fecha               string `json:"fecha"`
	Emisor              Party  `json:"emisor"`
	Receptor            *Party `json:"receptor,omitempty"`
	CallbackURL         string `json:"callbackUrl,omitempty"`
	ConsecutivoReceptor string `json:"consecutivoReceptor,omitempty"`
	// comprobanteXml, the base64 of the signed XML, is appended by
	// encodeSubmission.
}

// encodeSubmission is b as JSON with the signed XML in base64 as its
// comprobanteXml. The XML, most of the body, is encoded once, straight into
// the body: base64 needs no JSON escaping, and encoding it as a string
// field would copy it twice more.
func encodeSubmission(b submitBody, signedXML []byte) ([]byte, error) {
	head, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	const field = `,"comprobanteXml":"`
	out := make([]byte, 0, len(head)+len(field)+base64.StdEncoding.EncodedLen(len(signedXML))+2)
	out = append(out, head[:len(head)-1]...) // without its closing brace
	out = append(out, field...)
	out = base64.StdEncoding.AppendEncode(out, signedXML)
	return append(out, `"}`...), nil
}

// Receipt is the tax authority's acknowledgement of a submission.
type Receipt struct {
	Clave string
	// Status is the HTTP status of the acknowledgement (202).
	Status int
	// Location is the status resource the answer pointed at, if any.
	Location string
	// At is when the acknowledgement arrived (the client's clock).
	At time.Time
}

// Submit posts a signed document. A nil error means the tax authority
// received it (202); its verdict comes later through Status. On failure the
// error is an *APIError or a *TransportError; Judge says what it means.
func (c *Client) Submit(ctx context.Context, creds Credentials, s Submission) (Receipt, error) {
	if err := validClave(s.Clave); err != nil {
		return Receipt{}, fmt.Errorf("submit: %w", err)
	}
	if len(s.SignedXML) == 0 {
		return Receipt{}, errors.New("submit: empty signed XML")
	}
	if s.Emisor.TipoIdentificacion == "" || s.Emisor.NumeroIdentificacion == "" {
		return Receipt{}, errors.New("submit: the issuer's identification is missing")
	}
	if s.Fecha.IsZero() {
		return Receipt{}, errors.New("submit: fecha is missing")
	}
	b := submitBody{
		Clave:               s.Clave,
		Fecha:               s.Fecha.In(hacienda.CostaRica).Format(time.RFC3339),
		Emisor:              s.Emisor,
		Receptor:            s.Receptor,
		CallbackURL:         s.CallbackURL,
		ConsecutivoReceptor: s.ConsecutivoReceptor,
	}
	if b.CallbackURL == "" {
		b.CallbackURL = c.opts.CallbackURL
	}
	body, err := encodeSubmission(b, s.SignedXML)
	if err != nil {
		return Receipt{}, fmt.Errorf("submit: encode: %w", err)
	}
	resp, err := c.call(ctx, OpSubmit, creds, http.MethodPost, c.ep.APIURL+"/recepcion", body)
	if err != nil {
		return Receipt{}, err
	}
	if err := Check(OpSubmit, resp.status, resp.header, resp.body); err != nil {
		c.log.DebugContext(ctx, "tax authority refused a submission", "company", creds.CompanyID, "clave", s.Clave,
			"status", resp.status, "cause", errorCause(err))
		return Receipt{}, err
	}
	return Receipt{Clave: s.Clave, Status: resp.status, Location: resp.header.Get("Location"), At: c.clock.Now()}, nil
}

// Estado is the tax authority's ind-estado, lower-cased.
type Estado string

// The states of a received document.
const (
	EstadoRecibido   Estado = "recibido"
	EstadoProcesando Estado = "procesando"
	EstadoAceptado   Estado = "aceptado"
	EstadoRechazado  Estado = "rechazado"
	EstadoError      Estado = "error"
)

// Final reports whether the tax authority has given its verdict.
func (e Estado) Final() bool { return e == EstadoAceptado || e == EstadoRechazado }

// Status is the tax authority's answer about one clave.
type Status struct {
	Clave string
	// Fecha is the answer's fecha as sent; FechaTime its parsed value (zero
	// when it could not be parsed).
	Fecha     string
	FechaTime time.Time
	Estado    Estado
	// ResponseXML is the decoded respuesta-xml (a signed MensajeHacienda);
	// nil until the verdict.
	ResponseXML []byte
	// Mensaje is ResponseXML read; nil when there is none.
	Mensaje *hacienda.MensajeHacienda
	// Answer is ResponseXML parsed, for checking its signature with
	// signer.VerifyParsed without parsing it again; nil when there is
	// none.
	Answer *signer.Parsed
	// At is when the answer arrived (the client's clock).
	At time.Time
}

// Status asks the tax authority for the state of a document. key is the
// clave, or clave-consecutivoReceptor for a MensajeReceptor. A clave the
// tax authority does not know is an *APIError matching ErrNotFound.
func (c *Client) Status(ctx context.Context, creds Credentials, key string) (Status, error) {
	if err := validStatusKey(key); err != nil {
		return Status{}, fmt.Errorf("status: %w", err)
	}
	resp, err := c.call(ctx, OpStatus, creds, http.MethodGet, c.ep.APIURL+"/recepcion/"+key, nil)
	if err != nil {
		return Status{}, err
	}
	if err := Check(OpStatus, resp.status, resp.header, resp.body); err != nil {
		return Status{}, err
	}
	st, err := decodeStatus(resp.body)
	if err != nil {
		return Status{}, &TransportError{Op: OpStatus, Kind: KindUnreadable, Retryable: true, MaybeReceived: true, Err: err}
	}
	st.At = c.clock.Now()
	return st, nil
}

// decodeStatus reads the status JSON. Key names are matched ignoring case
// and hyphens, so both the GET spelling (ind-estado, respuesta-xml) and the
// callback sample's (indEstado, respuestaXml) are read.
func decodeStatus(body []byte) (Status, error) {
	fields, err := statusFields(body)
	if err != nil {
		return Status{}, fmt.Errorf("read status answer: %w", err)
	}
	st := Status{
		Clave:  fields["clave"],
		Fecha:  fields["fecha"],
		Estado: Estado(strings.ToLower(strings.TrimSpace(fields["indestado"]))),
	}
	if st.Estado == "" {
		return Status{}, errors.New("read status answer: no ind-estado")
	}
	if t, err := time.Parse(time.RFC3339, st.Fecha); err == nil {
		st.FechaTime = t
	}
	if x := strings.TrimSpace(fields["respuestaxml"]); x != "" {
		dec, err := base64.StdEncoding.DecodeString(x)
		if err != nil {
			return Status{}, fmt.Errorf("read status answer: respuesta-xml is not base64: %w", err)
		}
		// Read once, for its content here and its signature later
		// (signer.VerifyParsed).
		answer, err := signer.Parse(dec)
		if err != nil {
			// Not XML at all: say so, not that a signature is invalid.
			why := err
			var pe *signer.ParseError
			if errors.As(err, &pe) {
				why = pe
			}
			return Status{}, fmt.Errorf("read status answer: %w: %v", hacienda.ErrNotMensajeHacienda, why)
		}
		m, err := hacienda.ReadMensajeHacienda(answer.Root())
		if err != nil {
			return Status{}, fmt.Errorf("read status answer: %w", err)
		}
		st.ResponseXML, st.Mensaje, st.Answer = dec, m, answer
	}
	return st, nil
}

// statusFields reads a status answer's string fields by their names in
// lower case without dashes or underscores ("ind-estado" as "indestado").
// A null or non-string value is treated as absent. The usual answer, all
// strings or nulls, is decoded in one pass; one holding another kind of
// value is decoded field by field.
func statusFields(body []byte) (map[string]string, error) {
	if fields, ok := plainStatusFields(body); ok {
		return fields, nil
	}
	return jsonStatusFields(body)
}

// jsonStatusFields is statusFields with encoding/json, for any answer. It
// reads the members in order, as plainStatusFields does: of two names that
// normalize alike the later wins, and a null or non-string value leaves the
// field absent.
func jsonStatusFields(body []byte) (map[string]string, error) {
	// One object and nothing after it.
	if err := json.Unmarshal(body, new(map[string]json.RawMessage)); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		var s *string
		if err := json.Unmarshal(v, &s); err != nil || s == nil {
			delete(fields, normKey(k))
			continue
		}
		fields[normKey(k)] = *s
	}
	return fields, nil
}

// normKey is a status field's name in lower case without dashes or
// underscores.
func normKey(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return unicode.ToLower(r)
	}, k)
}

// plainStatusFields reads the usual status answer without encoding/json,
// whose validation pass and decoding cost more than the rest of reading
// the answer's JSON: an object whose values are strings or null, with no
// escapes in its names or strings, all valid UTF-8. It reports false for
// anything else, which statusFields then reads with encoding/json; for
// what it reads, the fields are the same (a fuzz test compares them).
func plainStatusFields(body []byte) (map[string]string, bool) {
	i := 0
	space := func() {
		for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r') {
			i++
		}
	}
	str := func() ([]byte, bool) {
		if i >= len(body) || body[i] != '"' {
			return nil, false
		}
		i++
		start := i
		for i < len(body) && body[i] != '"' {
			if body[i] == '\\' || body[i] < 0x20 {
				return nil, false
			}
			i++
		}
		if i >= len(body) || !utf8.Valid(body[start:i]) {
			return nil, false
		}
		i++
		return body[start : i-1], true
	}
	fields := make(map[string]string, 8)
	space()
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	i++
	space()
	if i < len(body) && body[i] == '}' {
		i++
	} else {
		for {
			space()
			key, ok := str()
			if !ok {
				return nil, false
			}
			space()
			if i >= len(body) || body[i] != ':' {
				return nil, false
			}
			i++
			space()
			if bytes.HasPrefix(body[i:], []byte("null")) {
				i += len("null")
				delete(fields, normKey(string(key))) // a later member wins, a null too
			} else {
				v, ok := str()
				if !ok {
					return nil, false
				}
				fields[normKey(string(key))] = string(v)
			}
			space()
			if i >= len(body) {
				return nil, false
			}
			if body[i] == '}' {
				i++
				break
			}
			if body[i] != ',' {
				return nil, false
			}
			i++
		}
	}
	space()
	return fields, i == len(body)
}

// DecodeCallback reads the JSON the tax authority posts to a callbackUrl
// (the same shape as Status's answer). Treat it as a hint and confirm with
// Status: the callback is not authenticated.
func DecodeCallback(body []byte) (Status, error) { return decodeStatus(body) }

// validClave checks the clave's shape with the one parser of it
// (hacienda.ParseClave).
func validClave(clave string) error {
	if _, err := hacienda.ParseClave(clave); err != nil {
		return fmt.Errorf("clave %q: %w", clave, err)
	}
	return nil
}

func validStatusKey(key string) error {
	clave, consecutivo, found := strings.Cut(key, "-")
	if err := validClave(clave); err != nil {
		return err
	}
	if found && (len(consecutivo) != 20 || strings.Trim(consecutivo, "0123456789") != "") {
		return fmt.Errorf("consecutivo receptor %q: want 20 digits", consecutivo)
	}
	return nil
}

func errorCause(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Cause
	}
	return ""
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// call makes one authenticated exchange with the reception API. A 401
// drops the token and the exchange is made once more with a new one.
func (c *Client) call(ctx context.Context, op Op, creds Credentials, method, url string, body []byte) (*response, error) {
	for attempt := 0; ; attempt++ {
		tok, err := c.tokens.token(ctx, creds)
		if err != nil {
			return nil, err
		}
		ct := ""
		if body != nil {
			ct = "application/json; charset=utf-8"
		}
		resp, err := c.exchange(ctx, op, string(op), method, url, ct, body, "bearer "+tok)
		if err != nil {
			return nil, err
		}
		if resp.status == http.StatusUnauthorized && attempt == 0 {
			c.tokens.invalidate(creds.CompanyID, tok)
			c.log.InfoContext(ctx, "tax authority refused the access token; renewing it", "company", creds.CompanyID, "op", string(op))
			continue
		}
		return resp, nil
	}
}

// exchange makes one HTTP exchange under the operation's timeout and reads
// the whole answer. Failures without a readable answer come back as a
// classified *TransportError. label is the metric's op label.
func (c *Client) exchange(ctx context.Context, op Op, label, method, url, contentType string, body []byte, auth string) (_ *response, err error) {
	timeout := c.opts.Timeout
	if op == OpToken || op == OpLogout {
		timeout = c.opts.TokenTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	start := time.Now()
	status := 0
	defer func() {
		c.metrics.observe(label, status, err, time.Since(start))
	}()

	var written atomic.Bool
	trace := &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				written.Store(true)
			}
		},
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, url, rd)
	if err != nil {
		return nil, &TransportError{Op: op, Kind: KindBadRequest, Err: err}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, ClassifyTransport(op, err, written.Load())
	}
	defer resp.Body.Close()
	status = resp.StatusCode
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxResponseBytes+1))
	if err != nil {
		// The request was answered, so it was received.
		te := ClassifyTransport(op, err, true)
		if te.Kind == KindOther {
			te.Kind = KindCutOff
		}
		return nil, te
	}
	if int64(len(data)) > c.opts.MaxResponseBytes {
		return nil, &TransportError{Op: op, Kind: KindTooLarge, Retryable: false, MaybeReceived: true,
			Err: fmt.Errorf("answer larger than %d bytes", c.opts.MaxResponseBytes)}
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}
