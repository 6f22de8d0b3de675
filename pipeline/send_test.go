package pipeline

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/hacienda/xmlcheck"
	"facturad/signer"
	"facturad/tenant"
)

func TestSendEveryType(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: k.open})
			var factura string
			for _, tipo := range hacienda.DocumentTypes {
				t.Run("ok/"+string(tipo), func(t *testing.T) {
					out := b.sendOfType(t, tipo, "doc-"+string(tipo), &factura)
					if out.Failed || out.Estado != tenant.StateSent || out.Key != "" || out.Message != "" {
						t.Fatalf("send: %s", describe(out))
					}
					d := b.stored(t, out.Document.Clave)
					if d.Estado != tenant.StateSent || d.SubmittedAt.IsZero() || len(d.SignedXML) == 0 {
						t.Fatalf("stored: estado %s submitted %v xml %d bytes", d.Estado, d.SubmittedAt, len(d.SignedXML))
					}
					if d.Tipo != string(tipo) || d.Consecutivo[8:10] != string(tipo) || d.Clave[21:41] != d.Consecutivo {
						t.Errorf("numbering: tipo %s consecutivo %s clave %s", d.Tipo, d.Consecutivo, d.Clave)
					}
					if _, err := signer.Verify(d.SignedXML); err != nil {
						t.Errorf("stored XML does not verify: %v", err)
					}
					validXSD(t, tipo, d.SignedXML)
					rec, ok := b.sb.Document(d.Clave)
					if !ok || !bytes.Equal(rec.XML, d.SignedXML) {
						t.Fatalf("the sandbox did not receive the stored bytes (received %v)", ok)
					}
					// The JSON parties are the XML's (spec §15.3): in a
					// purchase invoice the seller is the emisor and the
					// company the receptor.
					company := sandbox.Party{TipoIdentificacion: b.company.TipoIdentificacion, NumeroIdentificacion: b.company.NumeroIdentificacion}
					if tipo == hacienda.TypeFEC {
						if rec.Emisor == company || rec.Receptor == nil || *rec.Receptor != company {
							t.Errorf("FEC submission emisor %+v receptor %+v, want the seller and the company", rec.Emisor, rec.Receptor)
						}
					} else if rec.Emisor != company {
						t.Errorf("submission emisor %+v, want the company", rec.Emisor)
					}

					// Check until the verdict: the sandbox answers at once.
					ck, err := b.p.Check(context.Background(), b.branch, d.Clave)
					if err != nil {
						t.Fatal(err)
					}
					if ck.Failed || ck.Estado != tenant.StateAccepted {
						t.Fatalf("check: %s (detail %v)", describe(ck), ck.Document.DetalleMensaje)
					}
					d = b.stored(t, d.Clave)
					if d.Estado != tenant.StateAccepted || d.CodigoMensaje != "1" || len(d.ResponseXML) == 0 ||
						d.IndEstado != "aceptado" || d.CheckedAt.IsZero() || !d.NextAttemptAt.IsZero() {
						t.Errorf("stored after check: estado %s codigo %q answer %d bytes ind %q next %v",
							d.Estado, d.CodigoMensaje, len(d.ResponseXML), d.IndEstado, d.NextAttemptAt)
					}
				})
			}
			// Numbers grow per type: a second FE is number 2.
			out := b.mustSend(t, request("01", "doc-01-second"))
			if got := out.Document.Consecutivo[10:]; got != "0000000002" {
				t.Errorf("second FE numbered %s", got)
			}
		})
	}
}

func TestSendValidation(t *testing.T) {
	b := setup(t, setupOptions{})
	tests := []struct {
		name  string
		req   map[string]any
		field string
	}{
		{"error/no lines", func() map[string]any { r := request("01", "v1"); delete(r, "detalleServicio"); return r }(), "detalleServicio"},
		{"error/bad type", func() map[string]any { r := request("01", "v2"); r["tipo_documento"] = "77"; return r }(), "tipo_documento"},
		{"error/clave of another issuer", func() map[string]any {
			r := request("01", "v3")
			r["clave"] = "50601012600310199999900100001010000000001100000001"
			return r
		}(), "clave"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.send(t, tc.req)
			var fe interface{ FieldErrors() map[string][]string }
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a validation error", err)
			}
			if _, ok := fe.FieldErrors()[tc.field]; !ok {
				t.Errorf("fields %v, want %s", fe.FieldErrors(), tc.field)
			}
		})
	}
	if n := b.sub.submits.Load(); n != 0 {
		t.Errorf("%d submissions for invalid requests", n)
	}
}

func TestSendCallerClave(t *testing.T) {
	b := setup(t, setupOptions{})
	// Number a document ourselves the way a caller would.
	c, _ := hacienda.NewConsecutivo("001", "00001", "01", 77)
	now := b.clock.now()
	k, err := hacienda.NewClave(now, b.company.NumeroIdentificacion, c, "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := request("01", "own-clave")
	r["clave"] = k.String()
	r["fecha_emision"] = now.In(hacienda.CostaRica).Format("2006-01-02T15:04:05")
	out := b.mustSend(t, r)
	if out.Failed || out.Document.Clave != k.String() || out.Document.Consecutivo != c.String() {
		t.Fatalf("send: %s clave %s consecutivo %s", describe(out), out.Document.Clave, out.Document.Consecutivo)
	}
	if d := b.stored(t, k.String()); d.Numero != 77 {
		t.Errorf("stored number %d, want the clave's own 77", d.Numero)
	}
	// The same clave under another id_externo is taken.
	r["id_externo"] = "own-clave-2"
	_, err = b.send(t, r)
	var fe interface{ FieldErrors() map[string][]string }
	if !errors.As(err, &fe) || fe.FieldErrors()["clave"] == nil {
		t.Fatalf("reused clave: got %v", err)
	}
	// So is its consecutivo under another security code.
	k2, err := hacienda.NewClave(now, b.company.NumeroIdentificacion, c, "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if k2.String() == k.String() {
		t.Fatal("two claves drew the same security code")
	}
	r["id_externo"], r["clave"] = "own-clave-3", k2.String()
	_, err = b.send(t, r)
	if !errors.As(err, &fe) || fe.FieldErrors()["clave"] == nil {
		t.Fatalf("reused consecutivo: got %v", err)
	}
	// The service's next number of the sequence is past the caller's.
	out = b.mustSend(t, request("01", "numbered-after"))
	if out.Failed || out.Document.Numero != 78 {
		t.Errorf("next document: %s number %d, want 78", describe(out), out.Document.Numero)
	}
}

func TestSendOnlyBranchUsers(t *testing.T) {
	b := setup(t, setupOptions{})
	_, err := b.sendRaw(context.Background(), b.admin, body(t, request("01", "x")))
	if !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("admin send: %v", err)
	}
}

func TestIdempotency(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: k.open})
			first := b.mustSend(t, request("01", "same-id"))
			if first.Failed {
				t.Fatalf("first: %s", describe(first))
			}
			t.Run("ok/replay", func(t *testing.T) {
				// The same request, spelled differently (key order and
				// case), replays the stored answer without a new number
				// or submission.
				raw := body(t, request("01", "same-id"))
				raw = bytes.Replace(raw, []byte(`"condicion_venta"`), []byte(`"Condicion_Venta"`), 1)
				out, err := b.sendRaw(context.Background(), b.branch, raw)
				if err != nil {
					t.Fatal(err)
				}
				if out.Document.Clave != first.Document.Clave || out.Failed || out.Estado != tenant.StateSent {
					t.Fatalf("replay: %s clave %s, first %s", describe(out), out.Document.Clave, first.Document.Clave)
				}
				if n := b.sub.submits.Load(); n != 1 {
					t.Errorf("%d submissions, want 1", n)
				}
				if len(b.sb.Received()) != 1 {
					t.Errorf("the sandbox received %d documents", len(b.sb.Received()))
				}
			})
			t.Run("error/another body", func(t *testing.T) {
				r := request("01", "same-id")
				r["condicion_venta"] = "02"
				r["plazo_credito"] = "30"
				_, err := b.send(t, r)
				var fe interface{ FieldErrors() map[string][]string }
				if !errors.As(err, &fe) || fe.FieldErrors()["id_externo"] == nil {
					t.Fatalf("conflicting id_externo: got %v", err)
				}
			})
			t.Run("ok/another branch may reuse it", func(t *testing.T) {
				// id_externo is unique per branch, not per service.
				_, other := b.newCompany(t, "3101654321")
				out, err := b.sendRaw(context.Background(), other, body(t, request("01", "same-id")))
				if err != nil || out.Failed {
					t.Fatalf("other branch: %v %s", err, describe(out))
				}
				if out.Document.Clave == first.Document.Clave {
					t.Fatal("another branch replayed this branch's document")
				}
			})
		})
	}
}

func TestRequestHashCanonical(t *testing.T) {
	a, _ := hacienda.DecodeSendRequest([]byte(`{"id_externo":"1","tipo_documento":"01","condicion_venta":"01"}`))
	b, _ := hacienda.DecodeSendRequest([]byte(` { "Condicion_Venta" : "01", "tipo_documento":"01" ,"id_externo":"1"}`))
	c, _ := hacienda.DecodeSendRequest([]byte(`{"id_externo":"1","tipo_documento":"01","condicion_venta":"02"}`))
	ha, hb, hc := hashOf(t, a), hashOf(t, b), hashOf(t, c)
	if !bytes.Equal(ha, hb) {
		t.Error("the same request spelled differently hashes differently")
	}
	if bytes.Equal(ha, hc) {
		t.Error("different requests hash the same")
	}
}

func TestIssuerPartyValid(t *testing.T) {
	b := setup(t, setupOptions{})
	is, err := b.svc.Issuer(context.Background(), b.branch.CompanyID, b.branch.BranchID)
	if err != nil {
		t.Fatal(err)
	}
	p := issuerParty(is, "")
	if p.Identificacion.Numero != b.company.NumeroIdentificacion || p.Ubicacion == nil || p.Telefono == nil ||
		len(p.CorreoElectronico) != 1 || !strings.Contains(p.Nombre, "Prueba") || p.ProveedorSistemas == "" {
		t.Errorf("issuer party %+v", p)
	}
}

// gateSubmitter holds every submission until release is closed.
type gateSubmitter struct {
	Submitter
	entered chan struct{}
	release chan struct{}
}

func (g *gateSubmitter) Submit(ctx context.Context, cr recepcion.Credentials, s recepcion.Submission) (recepcion.Receipt, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.Submitter.Submit(ctx, cr, s)
}

func TestConcurrentRepeatWhileSubmitting(t *testing.T) {
	b := setup(t, setupOptions{})
	g := &gateSubmitter{Submitter: b.client, entered: make(chan struct{}, 1), release: make(chan struct{})}
	b.p.o.Submitter = g
	first := make(chan Outcome, 1)
	go func() {
		out, err := b.send(t, request("01", "twice"))
		if err != nil {
			t.Error(err)
		}
		first <- out
	}()
	<-g.entered
	// The first call is submitting: a repeat is told to come back.
	_, err := b.send(t, request("01", "twice"))
	var oe *OverloadError
	if !errors.As(err, &oe) {
		t.Fatalf("repeat while submitting: %v", err)
	}
	close(g.release)
	out := <-first
	if out.Failed || out.Estado != tenant.StateSent {
		t.Fatalf("first: %s", describe(out))
	}
	again := b.mustSend(t, request("01", "twice"))
	if again.Document.Clave != out.Document.Clave || again.Failed {
		t.Fatalf("repeat after: %s", describe(again))
	}
	if st := b.sb.Stats(); st.Submissions != 1 {
		t.Errorf("%d submissions", st.Submissions)
	}
}

func TestSendDateOutOfRange(t *testing.T) {
	b := setup(t, setupOptions{})
	r := request("01", "old")
	r["fecha_emision"] = "1999-12-31T10:00:00"
	_, err := b.send(t, r)
	var fe interface{ FieldErrors() map[string][]string }
	if !errors.As(err, &fe) || fe.FieldErrors()["fecha_emision"] == nil {
		t.Fatalf("got %v", err)
	}
	if _, err := b.store.DocumentByExternalID(context.Background(), b.branch.BranchID, "old"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("a number was taken: %v", err)
	}
}

// validXSD validates a stored document against the official schema of its
// type.
func validXSD(t *testing.T, tipo hacienda.DocumentType, signed []byte) {
	t.Helper()
	if err := xmlcheck.XSD(t, tipo.RootElement(), signed); err != nil {
		t.Errorf("the stored XML does not validate against its schema: %v", err)
	}
}

func hashOf(t *testing.T, req *hacienda.SendDocumentRequest) []byte {
	t.Helper()
	_, h, err := canonicalRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSendEmissionWindow refuses a caller's fecha_emision the tax
// authority would reject, per situación, before a number is taken; one
// inside the window is numbered and sent.
func TestSendEmissionWindow(t *testing.T) {
	b := setup(t, setupOptions{})
	now := b.clock.now().In(hacienda.CostaRica)
	for _, tt := range []struct {
		name      string
		offset    time.Duration
		situacion string
		ok        bool
	}{
		{"error/6 hours ahead", 6 * time.Hour, "1", false},
		{"ok/a minute ahead", time.Minute, "1", true},
		{"error/3 days old normal", -72 * time.Hour, "1", false},
		{"error/3 days old contingencia", -72 * time.Hour, "2", false},
		{"ok/10 minutes old", -10 * time.Minute, "1", true},
		{"ok/3 days old sin internet", -71 * time.Hour, "3", true},
		{"error/4 days old sin internet", -96 * time.Hour, "3", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := "window-" + strings.ReplaceAll(tt.name, " ", "-")
			r := request("01", id)
			r["fecha_emision"] = now.Add(tt.offset).Format("2006-01-02T15:04:05")
			r["situacion"] = tt.situacion
			out, err := b.send(t, r)
			if tt.ok {
				if err != nil || out.Failed {
					t.Fatalf("send: %v %s", err, describe(out))
				}
				return
			}
			var fe interface{ FieldErrors() map[string][]string }
			if !errors.As(err, &fe) || fe.FieldErrors()["fecha_emision"] == nil {
				t.Fatalf("got %v, want a 400 on fecha_emision", err)
			}
			if _, err := b.store.DocumentByExternalID(context.Background(), b.branch.BranchID, id); !errors.Is(err, tenant.ErrNotFound) {
				t.Errorf("a number was taken: %v", err)
			}
		})
	}
}

// TestEveryTypeAgainstTheStrictestSandbox sends every document type to a
// sandbox with every check on: the official XSD through xmllint, signing
// certificates chaining to a trusted authority and belonging to the issuer,
// the parties, the emission window, the references. Each ends accepted.
func TestEveryTypeAgainstTheStrictestSandbox(t *testing.T) {
	xmlcheck.Tool(t, "xmllint")
	xsd, err := sandbox.NewXSDCheck(xmlcheck.SchemaDir())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(harnessCA().Cert)
	checks := sandbox.DefaultChecksTrusting(roots)
	checks.Schema = sandbox.AllOf(checks.Schema, xsd)
	b := setup(t, setupOptions{sandbox: sandbox.Options{Checks: &checks}})
	var factura string
	for _, tipo := range hacienda.DocumentTypes {
		out := b.sendOfType(t, tipo, "strict-"+string(tipo), &factura)
		ck, err := b.p.Check(context.Background(), b.branch, out.Document.Clave)
		if err != nil {
			t.Fatal(err)
		}
		if ck.Estado != tenant.StateAccepted {
			t.Errorf("%s: %s (detail %v)", tipo, describe(ck), ck.Document.DetalleMensaje)
		}
	}
}

// partsRecorder is a store that records, for each save, the state it
// stores and whether it carried the signed XML.
type partsRecorder struct {
	fullStore
	mu    sync.Mutex
	saves []string
}

func (r *partsRecorder) SaveDocument(ctx context.Context, d *tenant.Document) error {
	r.mu.Lock()
	r.saves = append(r.saves, fmt.Sprintf("%s signed=%v", d.Estado, len(d.SignedXML) > 0))
	r.mu.Unlock()
	return r.fullStore.SaveDocument(ctx, d)
}

// TestSignedXMLStoredOnce checks that only the save after signing carries
// the signed XML, and that the saves after it, which leave it out, keep
// the stored copy.
func TestSignedXMLStoredOnce(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			rec := &partsRecorder{}
			b := setup(t, setupOptions{store: func(t testing.TB) fullStore {
				rec.fullStore = k.open(t)
				return rec
			}})
			out := b.mustSend(t, request("01", "once-1"))
			if out.Failed || len(out.Document.SignedXML) == 0 {
				t.Fatalf("send: %s, %d bytes of XML in the answer", describe(out), len(out.Document.SignedXML))
			}
			ck, err := b.p.Check(context.Background(), b.branch, out.Document.Clave)
			if err != nil || ck.Estado != tenant.StateAccepted {
				t.Fatalf("check: %v %s", err, describe(ck))
			}
			rec.mu.Lock()
			saves := slices.Clone(rec.saves)
			rec.mu.Unlock()
			want := []string{"05 signed=true", "04 signed=false", "01 signed=false"}
			if !slices.Equal(saves, want) {
				t.Errorf("saves %q, want %q", saves, want)
			}
			if d := b.stored(t, out.Document.Clave); !bytes.Equal(d.SignedXML, out.Document.SignedXML) {
				t.Errorf("stored signed XML (%d bytes) is not the one sent (%d bytes)", len(d.SignedXML), len(out.Document.SignedXML))
			}
		})
	}
}
