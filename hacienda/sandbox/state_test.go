package sandbox_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda/sandbox"
	"facturad/hacienda/sandbox/sqlitestate"
)

// openState opens the sandbox state file at path, closed when the test
// ends (after the sandboxes on it, whose cleanups run first).
func openState(t *testing.T, path string) *sqlitestate.Store {
	t.Helper()
	st, err := sqlitestate.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// keptKeys are the keys of the documents st keeps, in arrival order.
func keptKeys(t *testing.T, st sandbox.Store) []string {
	t.Helper()
	rs, err := st.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range rs {
		keys = append(keys, r.Key)
	}
	return keys
}

// restarted is a sandbox started on the state of one that ran before
// (closed first), as after a restart of the service.
func restarted(t *testing.T, before *harness, path string, o sandbox.Options) *harness {
	t.Helper()
	if before != nil {
		before.ts.Close()
	}
	o.Store = openState(t, path)
	h := newHarness(t, o)
	h.login()
	return h
}

// A sandbox started again on the state of another knows what that one
// received and judged: a status query gets the same verdict and the same
// signed answer, a document sent again is a duplicate, and a credit note
// about a document accepted before is judged against what is left of it
// after the credit notes accepted before.
func TestStateKeptAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	a := restarted(t, nil, path, sandbox.Options{})
	send := func(h *harness, root, docType string, n int, total, ref string) (int, string, string) {
		t.Helper()
		clave, cons := claveFor(n, docType)
		resp := h.submit(clave, refDoc(root, clave, cons, total, ref))
		if resp.StatusCode != 202 {
			return resp.StatusCode, resp.Header.Get("X-Error-Cause"), ""
		}
		_, st := h.status(clave)
		return 202, st["ind-estado"], st["respuesta-xml"]
	}
	factura, _ := claveFor(1, "01")
	if code, estado, _ := send(a, "FacturaElectronica", "01", 1, "1000.00", ""); code != 202 || estado != "aceptado" {
		t.Fatalf("the invoice: %d %s", code, estado)
	}
	_, before := a.status(factura)
	if code, estado, _ := send(a, "NotaCreditoElectronica", "03", 2, "600", factura); estado != "aceptado" {
		t.Fatalf("credit of 600 before the restart: %d %s", code, estado)
	}

	b := restarted(t, a, path, sandbox.Options{})
	code, after := b.status(factura)
	if code != 200 || after["ind-estado"] != "aceptado" || after["respuesta-xml"] != before["respuesta-xml"] || after["fecha"] != before["fecha"] {
		t.Fatalf("the invoice after the restart: %d %v, before %v", code, after, before)
	}
	if code, cause, _ := send(b, "FacturaElectronica", "01", 1, "1000.00", ""); code != 400 || !strings.Contains(cause, "ya fue recibido") {
		t.Errorf("the invoice sent again after the restart: %d %q, want a duplicate", code, cause)
	}
	for _, tc := range []struct {
		name    string
		n       int
		total   string
		ref     string
		want    string // part of the rejection; empty: aceptado
		wantEst string
	}{
		{"error/credit of 500: 400 are left", 3, "500", factura, "excede el saldo del comprobante de referencia", "rechazado"},
		{"ok/credit of the 400 left", 4, "400", factura, "", "aceptado"},
		{"error/a cent more", 5, "0.01", factura, "excede", "rechazado"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, estado, answer := send(b, "NotaCreditoElectronica", "03", tc.n, tc.total, tc.ref)
			if code != 202 || estado != tc.wantEst || (tc.want != "" && !strings.Contains(decode(t, answer), tc.want)) {
				t.Fatalf("%d %s, want %s %q: %s", code, estado, tc.wantEst, tc.want, decode(t, answer))
			}
		})
	}

	// And once more: what was judged after the first restart is kept too.
	c := restarted(t, b, path, sandbox.Options{})
	if code, estado, _ := send(c, "NotaCreditoElectronica", "03", 6, "0.01", factura); code != 202 || estado != "rechazado" {
		t.Errorf("after a second restart, a credit past the total: %d %s", code, estado)
	}
	if n := len(c.ts.Received()); n != 6 {
		t.Errorf("%d documents known after the second restart, want 6", n)
	}
}

// A document received but not judged before the restart is judged after
// it, when its processing delay has passed on the new sandbox's clock.
func TestStateJudgedAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	o := sandbox.Options{ProcessingDelay: 10 * time.Second}
	a := restarted(t, nil, path, o)
	clave, cons := claveFor(7, "01")
	if resp := a.submit(clave, doc("FacturaElectronica", clave, cons, "")); resp.StatusCode != 202 {
		t.Fatal(resp.StatusCode)
	}
	if _, st := a.status(clave); st["ind-estado"] != "recibido" {
		t.Fatalf("before the delay: %v", st)
	}
	b := restarted(t, a, path, o)
	if _, st := b.status(clave); st["ind-estado"] != "recibido" {
		t.Fatalf("after the restart, before the delay: %v", st)
	}
	b.clock.Advance(10 * time.Second)
	if code, st := b.status(clave); code != 200 || st["ind-estado"] != "aceptado" || st["respuesta-xml"] == "" {
		t.Fatalf("after the delay: %d %v", code, st)
	}
}

// A receiver's message kept before a restart still holds its place: the
// same receiver's second message about the document is refused.
func TestStateKeepsReceiversMessages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	a := restarted(t, nil, path, sandbox.Options{})
	const buyer = "112340567"
	clave, cons := claveFor(1, "01")
	fe := partyDoc("FacturaElectronica", clave, cons, [2]string{issuerTipo, issuerNumero}, [2]string{"01", buyer})
	if resp := a.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", submitJSON(clave, fe, map[string]any{"receptor": party("01", buyer)})); resp.StatusCode != 202 {
		t.Fatalf("FE: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
	send := func(h *harness, consR string) *http.Response {
		return h.do(http.MethodPost, "/recepcion-sandbox/v1/recepcion", submitJSON(clave, mrDoc(clave, issuerNumero, buyer, consR, "100.50"),
			map[string]any{"receptor": party("01", buyer), "consecutivoReceptor": consR}))
	}
	const consR = "00100001050000000009"
	if resp := send(a, consR); resp.StatusCode != 202 {
		t.Fatalf("message: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
	b := restarted(t, a, path, sandbox.Options{})
	if code, st := b.status(clave + "-" + consR); code != 200 || st["ind-estado"] != "aceptado" {
		t.Fatalf("the message after the restart: %d %v", code, st)
	}
	if resp := send(b, "00100001070000000010"); resp.StatusCode != 400 || !strings.Contains(resp.Header.Get("X-Error-Cause"), consR) {
		t.Fatalf("a second message after the restart: %d %q", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
}

// The kept documents are bounded as the ones in memory: started again with
// a smaller MaxDocuments, the sandbox knows the newest only, and the file
// forgets the others at the next receipt.
func TestStateBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	a := restarted(t, nil, path, sandbox.Options{MaxDocuments: 3})
	var claves []string
	for i := 1; i <= 3; i++ {
		clave, cons := claveFor(i, "01")
		claves = append(claves, clave)
		if resp := a.submit(clave, doc("FacturaElectronica", clave, cons, "")); resp.StatusCode != 202 {
			t.Fatal(resp.StatusCode)
		}
	}
	b := restarted(t, a, path, sandbox.Options{MaxDocuments: 2})
	if code, _ := b.status(claves[0]); code != 404 {
		t.Errorf("the oldest after the restart: %d, want forgotten", code)
	}
	if code, _ := b.status(claves[2]); code != 200 {
		t.Errorf("the newest after the restart: %d", code)
	}
	clave, cons := claveFor(4, "01")
	if resp := b.submit(clave, doc("FacturaElectronica", clave, cons, "")); resp.StatusCode != 202 {
		t.Fatal(resp.StatusCode)
	}
	if kept := keptKeys(t, openState(t, path)); !slices.Equal(kept, []string{claves[2], clave}) {
		t.Errorf("the file keeps %v, want the two newest", kept)
	}
}

// A receipt that cannot be kept does not lose the forgetting of the
// documents its receipt made room for: the file forgets them at the next
// receipt kept, and keeps as many documents as the memory does.
func TestStateBoundedAfterWriteFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	fs := &faultyStore{Store: openState(t, path)}
	h := newHarness(t, sandbox.Options{Store: fs, MaxDocuments: 2})
	h.login()
	var claves []string
	for i := 1; i <= 3; i++ {
		clave, cons := claveFor(i, "01")
		claves = append(claves, clave)
		want := 202
		if i == 3 {
			fs.failReceive.Store(true)
			want = 503
		}
		if resp := h.submit(clave, doc("FacturaElectronica", clave, cons, "")); resp.StatusCode != want {
			t.Fatalf("document %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	fs.failReceive.Store(false)
	clave, cons := claveFor(3, "01")
	if resp := h.submit(clave, doc("FacturaElectronica", clave, cons, "")); resp.StatusCode != 202 {
		t.Fatalf("sent again: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
	if kept := keptKeys(t, fs); !slices.Equal(kept, claves[1:]) {
		t.Errorf("the file keeps %v, want the two newest %v", kept, claves[1:])
	}
}

// faultyStore is a real state file whose writes fail while told to.
type faultyStore struct {
	*sqlitestate.Store
	failReceive, failJudge atomic.Bool
}

var errInjected = errors.New("injected write failure")

func (f *faultyStore) Receive(ctx context.Context, r sandbox.Record, forget []string) error {
	if f.failReceive.Load() {
		return errInjected
	}
	return f.Store.Receive(ctx, r, forget)
}

func (f *faultyStore) Judge(ctx context.Context, key string, v sandbox.Verdict) error {
	if f.failJudge.Load() {
		return errInjected
	}
	return f.Store.Judge(ctx, key, v)
}

// A receipt that cannot be kept is not received (503, and the document is
// unknown until sent again); a verdict that cannot be kept is not told
// (procesando) and a credit note takes nothing, until a later query keeps
// it.
func TestStateWriteFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	fs := &faultyStore{Store: openState(t, path)}
	h := newHarness(t, sandbox.Options{Store: fs})
	h.login()

	factura, cons := claveFor(1, "01")
	fs.failReceive.Store(true)
	resp := h.submit(factura, refDoc("FacturaElectronica", factura, cons, "100", ""))
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a receipt not kept: %d, want 503 with Retry-After", resp.StatusCode)
	}
	if code, _ := h.status(factura); code != 404 {
		t.Fatalf("a receipt not kept is known: %d", code)
	}
	fs.failReceive.Store(false)
	if resp := h.submit(factura, refDoc("FacturaElectronica", factura, cons, "100", "")); resp.StatusCode != 202 {
		t.Fatalf("sent again: %d %s", resp.StatusCode, resp.Header.Get("X-Error-Cause"))
	}
	if _, st := h.status(factura); st["ind-estado"] != "aceptado" {
		t.Fatalf("the invoice: %v", st)
	}

	nota, ncons := claveFor(2, "03")
	if resp := h.submit(nota, refDoc("NotaCreditoElectronica", nota, ncons, "100", factura)); resp.StatusCode != 202 {
		t.Fatal(resp.StatusCode)
	}
	fs.failJudge.Store(true)
	if code, st := h.status(nota); code != 200 || st["ind-estado"] != "procesando" || st["respuesta-xml"] != "" {
		t.Fatalf("a verdict not kept: %d %v, want procesando", code, st)
	}
	// The note that could not be kept took nothing: another one may take
	// the whole total, and the first is then refused.
	fs.failJudge.Store(false)
	otra, ocons := claveFor(3, "03")
	if resp := h.submit(otra, refDoc("NotaCreditoElectronica", otra, ocons, "100", factura)); resp.StatusCode != 202 {
		t.Fatal(resp.StatusCode)
	}
	if _, st := h.status(otra); st["ind-estado"] != "aceptado" {
		t.Fatalf("the other note: %v", st)
	}
	if _, st := h.status(nota); st["ind-estado"] != "rechazado" || !strings.Contains(decode(t, st["respuesta-xml"]), "excede") {
		t.Fatalf("the first note, judged again: %v", st)
	}
	h.ts.Close()
	b := restarted(t, nil, path, sandbox.Options{})
	if _, st := b.status(nota); st["ind-estado"] != "rechazado" {
		t.Fatalf("the first note after a restart: %v", st)
	}
}

// heldStore is a real state file whose receipts wait, once entered, until
// release is closed.
type heldStore struct {
	*sqlitestate.Store
	entered, release chan struct{}
}

func (h *heldStore) Receive(ctx context.Context, r sandbox.Record, forget []string) error {
	close(h.entered)
	<-h.release
	return h.Store.Receive(ctx, r, forget)
}

// A status query while the receipt is still being written cannot keep a
// verdict for the document: it answers procesando, and the verdict is
// given (and kept) at a query after the receipt is.
func TestStateNoVerdictBeforeReceipt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	hs := &heldStore{Store: openState(t, path), entered: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, sandbox.Options{Store: hs})
	h.login()
	clave, cons := claveFor(1, "01")
	body := submitJSON(clave, doc("FacturaElectronica", clave, cons, ""), nil)
	req, err := http.NewRequest(http.MethodPost, h.ts.URL+"/recepcion-sandbox/v1/recepcion", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "bearer "+h.token)
	sent := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			sent <- 0
			return
		}
		resp.Body.Close()
		sent <- resp.StatusCode
	}()
	<-hs.entered
	if code, st := h.status(clave); code == 200 && st["ind-estado"] != "procesando" {
		t.Errorf("a query during the receipt: %s, want procesando", st["ind-estado"])
	}
	close(hs.release)
	if code := <-sent; code != 202 {
		t.Fatalf("the receipt: %d", code)
	}
	code, st := h.status(clave)
	if st["ind-estado"] != "aceptado" {
		t.Fatalf("after the receipt: %d %s", code, st["ind-estado"])
	}
	b := restarted(t, h, path, sandbox.Options{})
	if _, after := b.status(clave); after["ind-estado"] != "aceptado" || after["respuesta-xml"] != st["respuesta-xml"] {
		t.Errorf("after a restart: %s, another answer than the one told before: %v", after["ind-estado"], after["respuesta-xml"] != st["respuesta-xml"])
	}
}

// The answer signer kept in the file is the same at every start.
func TestStateAnswerSignerKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	minted := 0
	mint := func() (*sandbox.CertificateSigner, error) { minted++; return sandbox.DefaultAnswerSigner() }
	first, err := openState(t, path).AnswerSigner(context.Background(), mint)
	if err != nil {
		t.Fatal(err)
	}
	second, err := openState(t, path).AnswerSigner(context.Background(), mint)
	if err != nil {
		t.Fatal(err)
	}
	if minted != 1 || !first.Certificate().Equal(second.Certificate()) || !first.Root().Equal(second.Root()) {
		t.Fatalf("minted %d signers; the same certificate %v", minted, first.Certificate().Equal(second.Certificate()))
	}
	signed, err := second.SignAnswer([]byte(`<MensajeHacienda xmlns="x"><Clave>1</Clave></MensajeHacienda>`))
	if err != nil || !strings.Contains(string(signed), "Signature") {
		t.Fatalf("the kept signer signs: %v", err)
	}
}

func decode(t *testing.T, b64 string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
