package recepcion_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/hacienda/xmlcheck"
	"facturad/signer"
)

func TestSubmitAndStatusAccepted(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := realDoc(t, 1, nil)

	rc, err := b.client.Submit(ctx, creds, submission(clave, xml))
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if rc.Status != http.StatusAccepted || !strings.HasSuffix(rc.Location, "/recepcion-sandbox/v1/recepcion/"+clave) {
		t.Fatalf("receipt = %+v, want 202 and the status resource in Location", rc)
	}
	got, ok := b.sb.Document(clave)
	if !ok {
		t.Fatal("the sandbox did not record the document")
	}
	if string(got.XML) != string(xml) {
		t.Error("the sandbox received other bytes than the signed XML")
	}
	if got.Fecha != "2026-11-21T10:30:00-06:00" || got.Emisor.NumeroIdentificacion != issuerNumero || got.Receptor == nil {
		t.Errorf("recorded body = %+v", got)
	}

	st, err := b.client.Status(ctx, creds, clave)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.Estado != recepcion.EstadoAceptado || !st.Estado.Final() {
		t.Fatalf("estado = %q, want aceptado", st.Estado)
	}
	m := st.Mensaje
	if m == nil || !m.Accepted() || m.Mensaje != hacienda.MensajeAceptado || m.Clave != clave || m.EstadoMensaje != "Aceptado" {
		t.Fatalf("mensaje = %+v", m)
	}
	if m.NombreEmisor != "Compañía de Pruebas & Hijos S.A." || m.NumeroCedulaEmisor != issuerNumero ||
		m.TipoIdentificacionReceptor != "01" || m.NumeroCedulaReceptor != "112340567" {
		t.Errorf("mensaje parties = %+v", m)
	}
	// 1000 + 13 % and 2 × 250.5 + 4 %: 1130 + 521.04.
	if m.TotalFactura.String() != "1651.04" || !m.MontoTotalImpuesto.IsSet() || m.MontoTotalImpuesto.String() != "150.04" {
		t.Errorf("mensaje amounts = %v / %v", m.TotalFactura, m.MontoTotalImpuesto)
	}
	if lines := m.DetalleLines(); len(lines) != 1 || !strings.Contains(lines[0], "aceptado") {
		t.Errorf("detalle = %q", lines)
	}
	// The answer carries the sandbox's own XAdES signature, made as the
	// tax authority makes its own (no policy), and is a valid
	// MensajeHacienda.
	res, err := signer.VerifyWith(st.ResponseXML, signer.VerifyOptions{AnyPolicy: true})
	if err != nil {
		t.Fatalf("answer signature: %v", err)
	}
	if !strings.Contains(res.Certificate.Subject.CommonName, "SANDBOX") {
		t.Errorf("answer signed by %s", res.Certificate.Subject)
	}
	validateMensajeXSD(t, st.ResponseXML)
}

// validateMensajeXSD validates an answer against the official schema with
// xmllint.
func validateMensajeXSD(t *testing.T, xml []byte) {
	t.Helper()
	xmllint := xmlcheck.Tool(t, "xmllint")
	f := filepath.Join(t.TempDir(), "respuesta.xml")
	if err := os.WriteFile(f, xml, 0o600); err != nil {
		t.Fatal(err)
	}
	xsd := filepath.Join("..", "testdata", "xsd", "2024", "v4.4", "MensajeHacienda_V4.4.xsd")
	out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, f).CombinedOutput()
	if err != nil {
		t.Fatalf("MensajeHacienda does not validate: %v\n%s", err, out)
	}
}

func TestStatusRejectedByForcedHook(t *testing.T) {
	detail := []string{"-53, \"El total del comprobante no coincide con la suma de las líneas\", 0, 0"}
	b := setup(t, sandbox.Options{Faults: sandbox.Faults{RejectNext: 1, RejectDetail: detail}}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := realDoc(t, 2, nil)
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil {
		t.Fatal(err)
	}
	if st.Estado != recepcion.EstadoRechazado || st.Mensaje.Mensaje != hacienda.MensajeRechazado || st.Mensaje.EstadoMensaje != "Rechazado" {
		t.Fatalf("estado %q mensaje %+v, want rechazado / 3", st.Estado, st.Mensaje)
	}
	if lines := st.Mensaje.DetalleLines(); lines[len(lines)-1] != detail[0] {
		t.Errorf("detail lines = %q, want the last to be %q", lines, detail[0])
	}
	validateMensajeXSD(t, st.ResponseXML)

	// Only the next one: the following document is accepted.
	clave2, xml2 := realDoc(t, 3, nil)
	if _, err := b.client.Submit(ctx, creds, submission(clave2, xml2)); err != nil {
		t.Fatal(err)
	}
	if st, err := b.client.Status(ctx, creds, clave2); err != nil || st.Estado != recepcion.EstadoAceptado {
		t.Fatalf("second document: %v %v", st.Estado, err)
	}
}

func TestStatusRejectsABrokenSignature(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := realDoc(t, 4, nil)
	tampered := []byte(strings.Replace(string(xml), "<TotalComprobante>1651.04<", "<TotalComprobante>1651.05<", 1))
	if string(tampered) == string(xml) {
		t.Fatal("the total to tamper with was not found")
	}
	if _, err := b.client.Submit(ctx, creds, submission(clave, tampered)); err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil {
		t.Fatal(err)
	}
	if st.Estado != recepcion.EstadoRechazado || !strings.Contains(st.Mensaje.DetalleMensaje, "La firma del comprobante electrónico no es válida") {
		t.Fatalf("estado %q detalle %q", st.Estado, st.Mensaje.DetalleMensaje)
	}
}

// TestStatusRejectsWrongTotals: a document whose total is not what its
// lines give is signed correctly but rejected, with the amount named.
func TestStatusRejectsWrongTotals(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := realDoc(t, 20, func(d *hacienda.Document) {
		d.ResumenFactura.TotalComprobante = hacienda.MustAmount("1700")
	})
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil {
		t.Fatal(err)
	}
	if st.Estado != recepcion.EstadoRechazado || !strings.Contains(st.Mensaje.DetalleMensaje, "ResumenFactura/TotalComprobante (1700) no coincide con el calculado (1651.04)") {
		t.Fatalf("estado %q detalle %q", st.Estado, st.Mensaje.DetalleMensaje)
	}
	if strings.Contains(st.Mensaje.DetalleMensaje, "firma") {
		t.Fatalf("the signature was judged invalid: %q", st.Mensaje.DetalleMensaje)
	}
}

// TestStatusRejectsBrokenRules: a document that breaks a calculation rule
// (a payment that does not add up to the total) is rejected with the rule.
func TestStatusRejectsBrokenRules(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := realDoc(t, 22, func(d *hacienda.Document) {
		d.ResumenFactura.MedioPago[0].TotalMedioPago = hacienda.MustAmount("10")
	})
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil {
		t.Fatal(err)
	}
	if st.Estado != recepcion.EstadoRechazado || !strings.Contains(st.Mensaje.DetalleMensaje, "reglas de cálculo: resumenFactura.medioPago[0].totalMedioPago") {
		t.Fatalf("estado %q detalle %q", st.Estado, st.Mensaje.DetalleMensaje)
	}
}

// TestStatusRejectsABrokenStructure: a document that is not a v4.4
// document of an issued type is rejected.
func TestStatusRejectsABrokenStructure(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := unsignedDoc(21)
	xml = []byte(strings.Replace(string(xml), "<ResumenFactura>", "<ElementoDesconocido>x</ElementoDesconocido><ResumenFactura>", 1))
	if _, err := b.client.Submit(ctx, creds, submission(clave, sign(t, xml))); err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil {
		t.Fatal(err)
	}
	if st.Estado != recepcion.EstadoRechazado || !strings.Contains(st.Mensaje.DetalleMensaje, "estructura de la versión 4.4") ||
		!strings.Contains(st.Mensaje.DetalleMensaje, "ElementoDesconocido") {
		t.Fatalf("estado %q detalle %q", st.Estado, st.Mensaje.DetalleMensaje)
	}
}

func TestStatusMovesThroughStates(t *testing.T) {
	b := setup(t, sandbox.Options{ProcessingDelay: 10 * time.Second, Checks: noChecks}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := unsignedDoc(5)
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		advance time.Duration
		want    recepcion.Estado
	}{
		{0, recepcion.EstadoRecibido},
		{5 * time.Second, recepcion.EstadoProcesando},
		{5 * time.Second, recepcion.EstadoAceptado},
	} {
		b.clock.Advance(step.advance)
		st, err := b.client.Status(ctx, creds, clave)
		if err != nil {
			t.Fatal(err)
		}
		if st.Estado != step.want {
			t.Fatalf("after %v: estado %q, want %q", step.advance, st.Estado, step.want)
		}
		if (st.ResponseXML != nil) != step.want.Final() {
			t.Fatalf("estado %q with answer %v", st.Estado, st.ResponseXML != nil)
		}
	}
}

func TestSubmitRefusedAtReception(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := unsignedDoc(6)
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	otherClave, _ := claveFor(7)
	wrongIssuer := submission(clave, xml)
	wrongIssuer.Clave = otherClave
	wrongEmisor := submission(clave, xml)
	wrongEmisor.Emisor.NumeroIdentificacion = "3101999999"

	for name, s := range map[string]recepcion.Submission{
		"error/duplicate":       submission(clave, xml),
		"error/clave mismatch":  wrongIssuer,
		"error/emisor mismatch": wrongEmisor,
		"error/not xml":         submission(otherClave, []byte("not xml")),
		"error/receptor too big": func() recepcion.Submission {
			s := submission(otherClave, xml)
			s.Receptor.NumeroIdentificacion = "1234567890123"
			return s
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := b.client.Submit(ctx, creds, s)
			var ae *recepcion.APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Cause == "" || ae.Retryable || ae.MaybeReceived {
				t.Fatalf("err = %#v, want a non-retryable 400 with a cause", err)
			}
		})
	}
	st := b.sb.Stats()
	if st.Duplicates != 1 || st.Submissions != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestStatusUnknownClave(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	clave, _ := claveFor(99)
	_, err := b.client.Status(context.Background(), creds, clave)
	if !errors.Is(err, recepcion.ErrNotFound) || retryable(err) {
		t.Fatalf("err = %v, want ErrNotFound, not retryable", err)
	}
	if _, err := b.client.Status(context.Background(), creds, "123/../x"); err == nil {
		t.Fatal("a malformed clave reached the network")
	}
}

func TestTokenCoalescing(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{})
	ctx := context.Background()
	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clave, xml := unsignedDoc(1000 + i)
			if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("submit: %v", err)
	}
	st := b.sb.Stats()
	if st.PasswordGrants != 1 || st.RefreshGrants != 0 || st.Submissions != n {
		t.Fatalf("stats = %+v, want one password grant for %d submissions", st, n)
	}
}

// TestTokenFailureShared: while the token service hangs, concurrent calls
// for one company wait for one exchange and share its failure, instead of
// queueing one timeout after another.
func TestTokenFailureShared(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Faults: sandbox.Faults{Latency: sandbox.Duration(2 * time.Second)}},
		recepcion.Options{TokenTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	clave, _ := claveFor(30)
	const n = 100
	errs := make(chan error, n)
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.client.Status(ctx, creds, clave)
			errs <- err
		}()
	}
	wg.Wait()
	// One shared timeout, not one per queued caller (that would be 30 s).
	between(t, time.Since(start), 300*time.Millisecond, 3*time.Second)
	close(errs)
	for err := range errs {
		var te *recepcion.TransportError
		if !errors.As(err, &te) || te.Op != recepcion.OpToken || te.Kind != recepcion.KindTimeout || !te.Retryable {
			t.Fatalf("%#v, want a retryable token timeout", err)
		}
	}
}

func TestTokenRefreshAndRelogin(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := unsignedDoc(10)
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	concurrently := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := b.client.Status(ctx, creds, clave); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	want := func(password, refresh int64) {
		t.Helper()
		if st := b.sb.Stats(); st.PasswordGrants != password || st.RefreshGrants != refresh {
			t.Fatalf("grants: password %d refresh %d, want %d and %d", st.PasswordGrants, st.RefreshGrants, password, refresh)
		}
	}
	want(1, 0)

	// Still well inside its 300 s: no new token.
	b.clock.Advance(200 * time.Second)
	concurrently(50)
	want(1, 0)

	// Within RefreshBefore (30 s) of expiry: renewed once, by refresh.
	b.clock.Advance(75 * time.Second)
	concurrently(100)
	want(1, 1)

	// Past the access token's life: another single refresh.
	b.clock.Advance(301 * time.Second)
	concurrently(100)
	want(1, 2)

	// Past the session's 36 000 s: the refresh token is dead, log in again.
	b.clock.Advance(36000 * time.Second)
	concurrently(100)
	want(2, 2)
}

func TestUnauthorizedInvalidatesTheToken(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := unsignedDoc(11)
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	b.sb.RevokeTokens()
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil || st.Estado != recepcion.EstadoAceptado {
		t.Fatalf("status after revocation: %v %v", st.Estado, err)
	}
	s := b.sb.Stats()
	// One 401, then the refresh token is refused (revoked) and the client
	// logs in again.
	if s.Unauthorized != 1 || s.PasswordGrants != 2 {
		t.Fatalf("stats = %+v, want 1 unauthorized and 2 password grants", s)
	}
}

func TestUnauthorizedTwiceIsNotRetried(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Faults: sandbox.Faults{ErrorRates: map[int]float64{401: 1}}}, recepcion.Options{})
	clave, _ := claveFor(12)
	_, err := b.client.Status(context.Background(), creds, clave)
	if !errors.Is(err, recepcion.ErrUnauthorized) || retryable(err) {
		t.Fatalf("err = %v, want ErrUnauthorized, not retryable", err)
	}
	if s := b.sb.Stats(); s.InjectedErrors != 2 {
		t.Fatalf("the call was made %d times, want 2 (one retry with a new token)", s.InjectedErrors)
	}
}

func TestCredentials(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Users: map[string]string{creds.Username: string(creds.Password)}}, recepcion.Options{})
	ctx := context.Background()
	clave, _ := claveFor(13)

	// The password has characters that break an unencoded form.
	if _, err := b.client.Status(ctx, creds, clave); !errors.Is(err, recepcion.ErrNotFound) {
		t.Fatalf("with the right password: %v, want ErrNotFound from the API", err)
	}
	wrong := creds
	wrong.CompanyID = 8
	wrong.Password = []byte("wrong")
	_, err := b.client.Status(ctx, wrong, clave)
	if !errors.Is(err, recepcion.ErrCredentials) || retryable(err) {
		t.Fatalf("wrong password: %v, want ErrCredentials, not retryable", err)
	}
	if strings.Contains(err.Error(), "wrong") || strings.Contains(err.Error(), string(creds.Password)) {
		t.Fatalf("the error shows a password: %v", err)
	}
	// A company whose password changes logs in again with the new one.
	changed := creds
	changed.Password = []byte("new password")
	b.sb.AddUser(creds.Username, "new password")
	before := b.sb.Stats().PasswordGrants
	if _, err := b.client.Status(ctx, changed, clave); !errors.Is(err, recepcion.ErrNotFound) {
		t.Fatalf("after a password change: %v", err)
	}
	if got := b.sb.Stats().PasswordGrants; got != before+1 {
		t.Fatalf("password grants %d, want %d", got, before+1)
	}
	if _, err := b.client.Status(ctx, recepcion.Credentials{CompanyID: 9}, clave); err == nil {
		t.Fatal("empty credentials were accepted")
	}
}

func TestCloseLogsOut(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	clave, _ := claveFor(14)
	_, _ = b.client.Status(context.Background(), creds, clave)
	if err := b.client.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := b.sb.Stats(); s.Logouts != 1 {
		t.Fatalf("logouts = %d, want 1", s.Logouts)
	}
	// Still usable: logs in again.
	_, _ = b.client.Status(context.Background(), creds, clave)
	if s := b.sb.Stats(); s.PasswordGrants != 2 {
		t.Fatalf("password grants = %d, want 2", s.PasswordGrants)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{Registerer: reg})
	clave, xml := unsignedDoc(15)
	ctx := context.Background()
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	_, _ = b.client.Submit(ctx, creds, submission(clave, xml)) // duplicate: 400
	n, err := testutil.GatherAndCount(reg, "facturad_hacienda_calls_total", "facturad_hacienda_call_duration_seconds", "facturad_hacienda_token_grants_total")
	if err != nil {
		t.Fatal(err)
	}
	// calls: token/ok, submit/ok, submit/client_error; the histogram by op
	// only: password, submit; grants: password/ok.
	if n != 6 {
		t.Fatalf("%d series, want 6", n)
	}
	expected := `
# HELP facturad_hacienda_calls_total HTTP exchanges with the tax authority, by operation and outcome.
# TYPE facturad_hacienda_calls_total counter
facturad_hacienda_calls_total{op="password",outcome="ok"} 1
facturad_hacienda_calls_total{op="submit",outcome="client_error"} 1
facturad_hacienda_calls_total{op="submit",outcome="ok"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expected), "facturad_hacienda_calls_total"); err != nil {
		t.Fatal(err)
	}
	// A second client on the same registry shares the collectors.
	if _, err := recepcion.New(recepcion.Options{APIURL: b.sb.APIURL, TokenURL: b.sb.TokenURL, Registerer: reg}); err != nil {
		t.Fatal(err)
	}
}

func TestNewOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		o    recepcion.Options
		ok   bool
		want recepcion.Endpoints
	}{
		"error/sandbox without URLs": {o: recepcion.Options{}},
		"error/unknown environment":  {o: recepcion.Options{Environment: "dev", APIURL: "http://x", TokenURL: "http://y"}},
		"error/relative URL":         {o: recepcion.Options{APIURL: "/recepcion", TokenURL: "http://y/token"}},
		"ok/staging": {o: recepcion.Options{Environment: recepcion.Staging}, ok: true, want: recepcion.Endpoints{
			TokenURL:  "https://idp.comprobanteselectronicos.go.cr/auth/realms/rut-stag/protocol/openid-connect/token",
			LogoutURL: "https://idp.comprobanteselectronicos.go.cr/auth/realms/rut-stag/protocol/openid-connect/logout",
			APIURL:    "https://api-sandbox.comprobanteselectronicos.go.cr/recepcion/v1",
			ClientID:  "api-stag",
		}},
		"ok/production": {o: recepcion.Options{Environment: recepcion.Production}, ok: true, want: recepcion.Endpoints{
			TokenURL:  "https://idp.comprobanteselectronicos.go.cr/auth/realms/rut/protocol/openid-connect/token",
			LogoutURL: "https://idp.comprobanteselectronicos.go.cr/auth/realms/rut/protocol/openid-connect/logout",
			APIURL:    "https://api.comprobanteselectronicos.go.cr/recepcion/v1",
			ClientID:  "api-prod",
		}},
		"ok/production through a proxy": {o: recepcion.Options{Environment: recepcion.Production, APIURL: "https://egress.example/recepcion/v1/"}, ok: true, want: recepcion.Endpoints{
			TokenURL:  "https://idp.comprobanteselectronicos.go.cr/auth/realms/rut/protocol/openid-connect/token",
			LogoutURL: "https://idp.comprobanteselectronicos.go.cr/auth/realms/rut/protocol/openid-connect/logout",
			APIURL:    "https://egress.example/recepcion/v1",
			ClientID:  "api-prod",
		}},
		"ok/sandbox elsewhere": {o: recepcion.Options{APIURL: "http://sb:8081/recepcion-sandbox/v1", TokenURL: "http://sb:8081/auth/realms/rut-stag/protocol/openid-connect/token"}, ok: true, want: recepcion.Endpoints{
			TokenURL:  "http://sb:8081/auth/realms/rut-stag/protocol/openid-connect/token",
			LogoutURL: "http://sb:8081/auth/realms/rut-stag/protocol/openid-connect/logout",
			APIURL:    "http://sb:8081/recepcion-sandbox/v1",
			ClientID:  "api-stag",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := recepcion.New(tc.o)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && c.Endpoints() != tc.want {
				t.Fatalf("endpoints = %+v\nwant %+v", c.Endpoints(), tc.want)
			}
		})
	}
}

// TestRefusedCredentialsFailFast: after the token service refuses a
// company's password, the same credentials fail at once, without a login,
// for RefusedCredentialsWait; changed credentials are tried at once.
func TestRefusedCredentialsFailFast(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Users: map[string]string{creds.Username: string(creds.Password)}},
		recepcion.Options{RefusedCredentialsWait: 10 * time.Minute})
	ctx := context.Background()
	clave, _ := claveFor(14)
	wrong := creds
	wrong.Password = []byte("wrong")
	logins := func() int64 { st := b.sb.Stats(); return st.PasswordGrants + st.TokenRefused }

	tests := []struct {
		name    string
		advance time.Duration
		creds   recepcion.Credentials
		want    error // nil: the API's ErrNotFound, the login worked
		logins  int64 // logins made by this step
	}{
		{"error/wrong password, first try", 0, wrong, recepcion.ErrCredentials, 1},
		{"error/wrong password again: no login", time.Minute, wrong, recepcion.ErrCredentials, 0},
		{"error/still within the wait: no login", 8 * time.Minute, wrong, recepcion.ErrCredentials, 0},
		{"ok/corrected password: tried at once", 0, creds, nil, 1},
		{"error/wrong again after a success: tried", 0, wrong, recepcion.ErrCredentials, 1},
		{"error/within the wait: no login", 9 * time.Minute, wrong, recepcion.ErrCredentials, 0},
		{"error/the wait is over: tried again", 2 * time.Minute, wrong, recepcion.ErrCredentials, 1},
	}
	for _, tt := range tests {
		b.clock.Advance(tt.advance)
		before := logins()
		_, err := b.client.Status(ctx, tt.creds, clave)
		if tt.want == nil {
			if !errors.Is(err, recepcion.ErrNotFound) {
				t.Fatalf("%s: %v, want ErrNotFound from the API", tt.name, err)
			}
		} else if !errors.Is(err, tt.want) || retryable(err) {
			t.Fatalf("%s: %v, want %v, not retryable", tt.name, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "wrong") {
			t.Fatalf("%s: the error shows the password: %v", tt.name, err)
		}
		if got := logins() - before; got != tt.logins {
			t.Errorf("%s: %d logins, want %d", tt.name, got, tt.logins)
		}
		// The token for creds stays cached after the corrected login; drop
		// it so that the next "wrong" step really logs in.
		if tt.want == nil {
			b.sb.RevokeTokens()
			b.clock.Advance(36001 * time.Second)
		}
	}
}
