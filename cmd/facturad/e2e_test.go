package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/gateway"
	"facturad/gateway/openapicheck"
	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/hacienda/sandbox"
	"facturad/hacienda/xmlcheck"
	"facturad/signer/certmint"
	"facturad/tenant/postgres"
	"facturad/tenant/storetest"
)

// The whole service through its real HTTP API: create a company with a
// minted certificate, send one document of every type, check each until the
// tax authority accepts it, and read the stored XML back: it must verify
// with xmlsec1 and validate against its official schema.

const (
	e2eAdminUser  = "ops"
	e2eAdminPass  = "a-long-password-123"
	e2eAdminToken = "tok-0123456789abcdef0123456789abcdef"
)

type apiClient struct {
	t                 *testing.T
	base              string
	token, user, pass string
}

// do makes a call, holding its request and answer to the OpenAPI document
// the service serves.
func (c apiClient) do(method, path, contentType string, body []byte) (int, []byte) {
	c.t.Helper()
	status, _, b, err := c.try(checkedHTTP(c.t), c.base, method, path, contentType, body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return status, b
}

// openAPIChecker is the service's OpenAPI document, loaded once.
var openAPIChecker = sync.OnceValues(func() (*openapicheck.Checker, error) {
	b, err := gateway.OpenAPI()
	if err != nil {
		return nil, err
	}
	return openapicheck.New(context.Background(), b)
})

// checkedHTTP is an HTTP client whose every call is checked against the
// OpenAPI document, a disagreement failing t.
func checkedHTTP(t *testing.T) *http.Client {
	t.Helper()
	c, err := openAPIChecker()
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: c.Transport(nil, func(err error) { t.Error(err) })}
}

// try makes the call with hc against base and returns its error instead of
// failing the test, for goroutines other than the test's.
func (c apiClient) try(hc *http.Client, base, method, path, contentType string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("AuthToken", c.token)
	req.SetBasicAuth(c.user, c.pass)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

func (c apiClient) json(method, path string, body []byte, want int, into any) {
	c.t.Helper()
	status, b := c.do(method, path, "application/json", body)
	if status != want {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, b)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// checkUntilVerdict checks a document (PUT, with query) until its estado
// is no longer 04, for as long as a generous deadline allows: the
// sandbox's delay and a loaded machine decide how many checks that takes.
func (c apiClient) checkUntilVerdict(clave, query string) document {
	c.t.Helper()
	var checked document
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c.json("PUT", "/api/documents/"+clave+"/v4"+query, nil, 200, &checked)
		if checked.Estado != "04" || time.Now().After(deadline) {
			return checked
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// document is the contract's Document answer.
type document struct {
	IDExterno   string   `json:"id_externo"`
	Consecutivo string   `json:"consecutivo"`
	Clave       string   `json:"clave"`
	Estado      string   `json:"estado"`
	Humanizado  string   `json:"estado_humanizado"`
	XML         *string  `json:"xml"`
	MensajeAPI  string   `json:"mensaje_api"`
	Key         string   `json:"mensaje_api_key"`
	Codigo      string   `json:"codigo_mensaje_hacienda"`
	Mensaje     string   `json:"mensaje_hacienda"`
	Detalle     []string `json:"detalle_mensaje_hacienda"`
}

// createCompany creates a company with a certificate minted under ca and
// returns its first branch user.
func createCompany(t *testing.T, admin apiClient, ca *certmint.CA, id string) apiClient {
	t.Helper()
	branch, _ := createCompanyWith(t, admin, ca, id, certmint.Options{}, nil)
	return branch
}

// createCompanyWith creates a company as createCompany does, with the
// certificate's validity from cert (NotBefore, NotAfter; zero: the
// defaults) and the form's fields extra added or replaced, and returns its
// first branch user and its id.
func createCompanyWith(t *testing.T, admin apiClient, ca *certmint.CA, id string, cert certmint.Options, extra map[string]string) (apiClient, int64) {
	t.Helper()
	ct, body := companyForm(t, ca, id, cert, extra)
	branch, companyID, _ := postCompany(t, admin, ct, body)
	return branch, companyID
}

// postCompany creates the company of the form body (of content type ct)
// as admin and returns its first branch user, its id and the create's
// answer as it came.
func postCompany(t *testing.T, admin apiClient, ct string, body []byte) (branch apiClient, companyID int64, answer []byte) {
	t.Helper()
	status, b := admin.do("POST", "/api/companies/v4", ct, body)
	if status != 200 {
		t.Fatalf("create company: %d %s", status, b)
	}
	var created struct {
		CompaniaID                    int64
		Usuario, Contrasena, APIToken string
	}
	if err := json.Unmarshal(b, &created); err != nil {
		t.Fatal(err)
	}
	return apiClient{t: t, base: admin.base, token: created.APIToken, user: created.Usuario, pass: created.Contrasena}, created.CompaniaID, b
}

// companyForm is the multipart form of a company whose identification is
// id, with a new certificate minted under ca (valid as cert says) and the
// fields of extra added or replaced (an empty value drops the field; an
// empty Certificado sends no file).
func companyForm(t *testing.T, ca *certmint.CA, id string, cert certmint.Options, extra map[string]string) (contentType string, body []byte) {
	t.Helper()
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: id, Name: "EMPRESA " + id, PIN: "1234",
		CA: ca, Key: certmint.TestKey(0), NotBefore: cert.NotBefore, NotAfter: cert.NotAfter,
	})
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{
		"TipoIdentificacion": "02", "Identificacion": id, "RazonSocial": "Empresa " + id + " S.A.",
		"ActividadComercial": "620100", "UsuarioHacienda": "cpj-" + id + "@stag.comprobanteselectronicos.go.cr",
		"ContrasenaHacienda": "clave-de-hacienda", "TipoCliente": "01", "RazonComercial": "Empresa " + id,
		"Provincia": "1", "Canton": "01", "Distrito": "01", "OtrasSenas": "Avenida central", "CodPais": "506",
		"Telefono": "22223333", "CorreoElectronico": "facturas@example.com", "Sucursal": "001",
		"FacturacionElectronica": "true", "Clave": "1234",
	}
	for k, v := range extra {
		if v == "" {
			delete(fields, k)
			continue
		}
		fields[k] = v
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok := extra["Certificado"]; !ok || v != "" { // "Certificado": "" sends none
		fw, err := w.CreateFormFile("Certificado", id+".p12")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(m.P12)
	}
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

// sendRequests are one valid request of every document type, from the
// engine's generator (FE, ND, NC, TE, FEC, FEE, REP in that order).
func sendRequests(t *testing.T, prefix string) [][]byte {
	t.Helper()
	var out [][]byte
	for i, r := range sample.Requests(4, len(hacienda.DocumentTypes)) { // a seed whose credit note credits less than its invoice
		r.IDExterno = fmt.Sprintf("%s-%d", prefix, i)
		r.FechaEmision = "" // the service stamps the time of sending
		r.Clave = ""
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// referTo points a sample's references at the FE of clave, which the tax
// authority received (it refuses a note about a document it does not
// know); with no clave yet the body is unchanged.
func referTo(body []byte, clave string) []byte {
	if clave == "" {
		return body
	}
	return bytes.ReplaceAll(body, []byte(sample.ReferencedClave), []byte(clave))
}

func caFile(t *testing.T, ca *certmint.CA) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := pem.Decode(ca.CertPEM()); b == nil {
		t.Fatal("CA PEM does not decode")
	}
	return p
}

// sendEveryType runs the acceptance flow for one running service.
func sendEveryType(t *testing.T, api string) {
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	caPEM := caFile(t, ca)
	branch := createCompany(t, admin, ca, "3101123456")

	var factura string // the FE the notes refer to
	for i, body := range sendRequests(t, "e2e") {
		tipo := hacienda.DocumentTypes[i]
		body = referTo(body, factura)
		t.Run(string(tipo), func(t *testing.T) {
			branch.t = t
			var sent document
			branch.json("POST", "/api/documents/v4?includeData=true", body, 200, &sent)
			if tipo == hacienda.TypeFE {
				factura = sent.Clave
			}
			if sent.Estado != "04" || sent.Humanizado != "Sent" || sent.MensajeAPI != "" || len(sent.Clave) != 50 || sent.XML == nil {
				t.Fatalf("send answer: %+v", sent)
			}
			if sent.Consecutivo[8:10] != string(tipo) {
				t.Errorf("consecutivo %s is not of type %s", sent.Consecutivo, tipo)
			}

			checked := branch.checkUntilVerdict(sent.Clave, "?includeXml=true&includeResponseXml=true")
			if checked.Estado != "01" || checked.Codigo != "1" || checked.Humanizado != "Accepted" {
				t.Fatalf("check answer: %+v", checked)
			}

			status, signed := branch.do("GET", "/api/documents/"+sent.Clave+"/xml/v4", "", nil)
			if status != 200 {
				t.Fatalf("signed XML: %d", status)
			}
			if inline, err := base64.StdEncoding.DecodeString(*sent.XML); err != nil || !bytes.Equal(inline, signed) {
				t.Errorf("the xml of the send answer is not the stored document (%v)", err)
			}
			if err := xmlcheck.XMLSec(t, signed, caPEM); err != nil {
				t.Errorf("xmlsec1: %v", err)
			}
			if err := xmlcheck.XSD(t, tipo.RootElement(), signed); err != nil {
				t.Errorf("xmllint: %v", err)
			}
			status, answer := branch.do("GET", "/api/documents/"+sent.Clave+"/response-xml/v4", "", nil)
			if status != 200 {
				t.Fatalf("answer XML: %d", status)
			}
			if err := xmlcheck.XSD(t, "MensajeHacienda", answer); err != nil {
				t.Errorf("answer XML: %v", err)
			}

			// A repeat of the same request replays the stored answer.
			var again document
			branch.json("POST", "/api/documents/v4", body, 200, &again)
			if again.Clave != sent.Clave {
				t.Errorf("repeat got clave %s, want %s", again.Clave, sent.Clave)
			}
		})
	}
}

func TestEndToEndEmbedded(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	_, api, _, stop := startService(t, t.TempDir(),
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	defer stop()
	sendEveryType(t, api)
	t.Run("received", func(t *testing.T) { receiveEveryAnswer(t, api) })
	t.Run("export", func(t *testing.T) { exportPeriod(t, api) })
	t.Run("webhook refusals", func(t *testing.T) { sandboxWebhookRefusals(t, api) })
}

// postgresSchema gives a migrated, empty schema of its own on the test
// PostgreSQL and a URL whose connections use it.
func postgresSchema(t *testing.T) string {
	t.Helper()
	url := storetest.PostgresURL(t)
	schema := storetest.UniqueName(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.DropSchema(context.Background()); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		s.Close()
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema
}

func masterKey(t *testing.T) string {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(k)
}

// TestEndToEndPostgresRedis runs the production shape: PostgreSQL, Redis,
// and a tax authority elsewhere, reached through the URL overrides (here a
// sandbox of the test's own, whose faults the test controls).
func TestEndToEndPostgresRedis(t *testing.T) {
	notQuick(t, "the end-to-end run on PostgreSQL and Redis (TestEndToEndEmbedded runs)")
	dbURL := postgresSchema(t)
	redisURL := storetest.RedisURL(t)
	sb := sandbox.NewTestServer(t, sandbox.Options{})
	_, api, _, stop := startService(t, t.TempDir(), append(sandboxService(t, sb),
		"--database-url", dbURL, "--redis-url", redisURL, "--master-key", masterKey(t))...)
	defer stop()
	sendEveryType(t, api)
	t.Run("received", func(t *testing.T) { receiveEveryAnswer(t, api) })
	t.Run("export", func(t *testing.T) { exportPeriod(t, api) })

	// A document the tax authority rejects ends in 02 with its detail lines.
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101654321")
	if err := sb.SetFaults(sandbox.Faults{RejectNext: 1, RejectDetail: []string{"-99 Rechazo de prueba", "segunda línea"}}); err != nil {
		t.Fatal(err)
	}
	var sent, checked document
	branch.json("POST", "/api/documents/v4", sendRequests(t, "rej")[0], 200, &sent)
	branch.json("PUT", "/api/documents/"+sent.Clave+"/v4", nil, 200, &checked)
	if checked.Estado != "02" || checked.Codigo != "3" || len(checked.Detalle) < 2 ||
		!strings.Contains(strings.Join(checked.Detalle, "\n"), "Rechazo de prueba") {
		t.Fatalf("rejected document: %+v", checked)
	}

	// With the tax authority down, the send call answers 500 with estado 05
	// and SendingDocumentError, and the document is kept: it can be read.
	if err := sb.SetFaults(sandbox.Faults{Outage: true}); err != nil {
		t.Fatal(err)
	}
	var down document
	branch.json("POST", "/api/documents/v4", sendRequests(t, "down")[0], 500, &down)
	if down.Estado != "05" || down.Key != "SendingDocumentError" || down.MensajeAPI == "" || len(down.Clave) != 50 {
		t.Fatalf("send during an outage: %+v", down)
	}
	var stored document
	branch.json("GET", "/api/documents/"+down.Clave+"/v4", nil, 200, &stored)
	if stored.Estado != "05" {
		t.Fatalf("stored during an outage: %+v", stored)
	}
}
