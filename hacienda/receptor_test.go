package hacienda_test

import (
	"bytes"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/hacienda/xmlcheck"
	"facturad/signer"
	"facturad/signer/certmint"
)

// supplierFE is a sample FE with tax, addressed to an identified receptor.
func supplierFE(t *testing.T) *hacienda.Document {
	t.Helper()
	for _, d := range sample.Documents(13, 60) {
		if d.Type == hacienda.TypeFE && d.Receptor != nil && len(d.Receptor.Identificacion.Numero) >= 9 &&
			d.Receptor.Identificacion.Tipo <= "04" && d.ResumenFactura.TotalImpuesto.Sign() > 0 {
			return d
		}
	}
	t.Fatal("no sample FE with an identified receptor and tax")
	return nil
}

func numbered(t *testing.T, m *hacienda.MensajeReceptor, n int64) *hacienda.MensajeReceptor {
	t.Helper()
	c, err := hacienda.NewConsecutivo("001", "00001", hacienda.ReceptorMessageType(m.Mensaje), n)
	if err != nil {
		t.Fatal(err)
	}
	m.NumeroConsecutivoReceptor = c.String()
	m.FechaEmisionDoc = time.Date(2026, 11, 22, 10, 30, 0, 0, hacienda.CostaRica)
	return m
}

func TestMensajeReceptorTotalsFromDocument(t *testing.T) {
	doc := supplierFE(t)
	m, err := hacienda.NewMensajeReceptor(doc, hacienda.ReceptorAnswer{Mensaje: "1", CondicionImpuesto: "01"})
	if err != nil {
		t.Fatal(err)
	}
	if !m.MontoTotalImpuesto.Equal(doc.ResumenFactura.TotalImpuesto) || !m.TotalFactura.Equal(doc.ResumenFactura.TotalComprobante) {
		t.Errorf("totals %s/%s, want the document's %s/%s", m.MontoTotalImpuesto, m.TotalFactura,
			doc.ResumenFactura.TotalImpuesto, doc.ResumenFactura.TotalComprobante)
	}
	if m.Clave != doc.Clave || m.NumeroCedulaEmisor != doc.Emisor.Identificacion.Numero ||
		m.NumeroCedulaReceptor != doc.Receptor.Identificacion.Numero {
		t.Errorf("parties or clave not the document's: %+v", m)
	}
}

func TestMensajeReceptorRules(t *testing.T) {
	doc := supplierFE(t)
	tax := doc.ResumenFactura.TotalImpuesto
	total := doc.ResumenFactura.TotalComprobante
	half := hacienda.NewAmount(tax.Decimal().Div(hacienda.AmountFromInt(2).Decimal()).Round(5))
	over := hacienda.NewAmount(tax.Decimal().Add(hacienda.AmountFromInt(1).Decimal()))
	overTotal := hacienda.NewAmount(total.Decimal().Add(hacienda.AmountFromInt(1).Decimal()))
	te := *doc
	te.Type = hacienda.TypeTE
	noReceptor := *doc
	noReceptor.Receptor = nil
	cases := []struct {
		name  string
		doc   *hacienda.Document
		a     hacienda.ReceptorAnswer
		field string // "" means accepted
		want  string // part of the message
	}{
		{"ok/accepted", doc, hacienda.ReceptorAnswer{Mensaje: "1"}, "", ""},
		{"ok/accepted with full credit", doc, hacienda.ReceptorAnswer{Mensaje: "1", CondicionImpuesto: "01", MontoTotalImpuestoAcreditar: tax, MontoTotalDeGastoAplicable: total}, "", ""},
		{"ok/partial credit", doc, hacienda.ReceptorAnswer{Mensaje: "2", DetalleMensaje: "Solo parte es deducible", CondicionImpuesto: "02", MontoTotalImpuestoAcreditar: half}, "", ""},
		{"ok/rejected", doc, hacienda.ReceptorAnswer{Mensaje: "3", DetalleMensaje: "Mercadería no recibida"}, "", ""},
		{"ok/proportionality without activity", doc, hacienda.ReceptorAnswer{Mensaje: "1", CondicionImpuesto: "05"}, "", ""},
		{"error/tiquete", &te, hacienda.ReceptorAnswer{Mensaje: "1"}, "xml", "Tiquete"},
		{"error/no receptor", &noReceptor, hacienda.ReceptorAnswer{Mensaje: "1"}, "xml", "Receptor"},
		{"error/mensaje missing", doc, hacienda.ReceptorAnswer{}, "mensaje", "required"},
		{"error/mensaje 4", doc, hacienda.ReceptorAnswer{Mensaje: "4"}, "mensaje", "1 (accepted)"},
		{"error/rejected without reason", doc, hacienda.ReceptorAnswer{Mensaje: "3"}, "detalleMensaje", "required"},
		{"error/partial without reason", doc, hacienda.ReceptorAnswer{Mensaje: "2", CondicionImpuesto: "02", MontoTotalImpuestoAcreditar: half}, "detalleMensaje", "required"},
		{"error/reason too short", doc, hacienda.ReceptorAnswer{Mensaje: "1", DetalleMensaje: "ok"}, "detalleMensaje", "at least 5"},
		{"error/reason too long", doc, hacienda.ReceptorAnswer{Mensaje: "3", DetalleMensaje: strings.Repeat("á", 161)}, "detalleMensaje", "at most 160"},
		{"error/condicion 06", doc, hacienda.ReceptorAnswer{Mensaje: "1", CondicionImpuesto: "06"}, "condicionImpuesto", "01, 02"},
		{"error/activity with proportionality", doc, hacienda.ReceptorAnswer{Mensaje: "1", CondicionImpuesto: "05", CodigoActividad: "620100"}, "codigoActividad", "05"},
		{"error/activity too long", doc, hacienda.ReceptorAnswer{Mensaje: "1", CodigoActividad: "6201001"}, "codigoActividad", "6 characters"},
		{"error/credit above the tax", doc, hacienda.ReceptorAnswer{Mensaje: "1", MontoTotalImpuestoAcreditar: over}, "montoTotalImpuestoAcreditar", "exceeds"},
		{"error/full credit not the tax", doc, hacienda.ReceptorAnswer{Mensaje: "1", CondicionImpuesto: "01", MontoTotalImpuestoAcreditar: half}, "montoTotalImpuestoAcreditar", "must be the document's"},
		{"error/partial credit is the whole tax", doc, hacienda.ReceptorAnswer{Mensaje: "2", DetalleMensaje: "Parcial por uso mixto", CondicionImpuesto: "02", MontoTotalImpuestoAcreditar: tax}, "montoTotalImpuestoAcreditar", "less than"},
		{"error/partial credit missing", doc, hacienda.ReceptorAnswer{Mensaje: "2", DetalleMensaje: "Parcial por uso mixto", CondicionImpuesto: "02"}, "montoTotalImpuestoAcreditar", "required"},
		{"error/credit on expense", doc, hacienda.ReceptorAnswer{Mensaje: "1", CondicionImpuesto: "04", MontoTotalImpuestoAcreditar: half}, "montoTotalImpuestoAcreditar", "04"},
		{"error/credit on rejection", doc, hacienda.ReceptorAnswer{Mensaje: "3", DetalleMensaje: "No corresponde", MontoTotalImpuestoAcreditar: half}, "montoTotalImpuestoAcreditar", "rejected"},
		{"error/credit with proportionality", doc, hacienda.ReceptorAnswer{Mensaje: "1", CondicionImpuesto: "05", MontoTotalImpuestoAcreditar: half}, "montoTotalImpuestoAcreditar", "05"},
		{"error/negative credit", doc, hacienda.ReceptorAnswer{Mensaje: "1", MontoTotalImpuestoAcreditar: hacienda.MustAmount("-1")}, "montoTotalImpuestoAcreditar", "negative"},
		{"error/six decimals", doc, hacienda.ReceptorAnswer{Mensaje: "1", MontoTotalImpuestoAcreditar: hacienda.MustAmount("0.000001")}, "montoTotalImpuestoAcreditar", "5 decimals"},
		{"error/expense above the total", doc, hacienda.ReceptorAnswer{Mensaje: "1", MontoTotalDeGastoAplicable: overTotal}, "montoTotalDeGastoAplicable", "exceeds"},
		{"error/expense on rejection", doc, hacienda.ReceptorAnswer{Mensaje: "3", DetalleMensaje: "No corresponde", MontoTotalDeGastoAplicable: total}, "montoTotalDeGastoAplicable", "rejected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := hacienda.NewMensajeReceptor(tc.doc, tc.a)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if m == nil {
					t.Fatal("no message")
				}
				return
			}
			var ve *hacienda.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a validation error on %s", err, tc.field)
			}
			msgs := ve.FieldErrors()[tc.field]
			if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, " "), tc.want) {
				t.Fatalf("errors %v, want %q on %s", ve.Fields, tc.want, tc.field)
			}
		})
	}
}

func TestCheckAnswerable(t *testing.T) {
	for _, typ := range hacienda.DocumentTypes {
		err := hacienda.CheckAnswerable(typ)
		want := typ == hacienda.TypeFE || typ == hacienda.TypeND || typ == hacienda.TypeNC || typ == hacienda.TypeFEE
		if (err == nil) != want {
			t.Errorf("%s: err = %v, answerable want %v", typ, err, want)
		}
	}
}

// signedMessages builds, numbers and signs one message of each kind.
func signedMessages(t *testing.T) (map[string][]byte, map[string]*hacienda.MensajeReceptor, *certmint.Minted) {
	t.Helper()
	doc := supplierFE(t)
	tax := doc.ResumenFactura.TotalImpuesto
	half := hacienda.NewAmount(tax.Decimal().Div(hacienda.AmountFromInt(2).Decimal()).Round(5))
	answers := map[string]hacienda.ReceptorAnswer{
		"accepted": {Mensaje: "1", CondicionImpuesto: "01", CodigoActividad: "620100", MontoTotalImpuestoAcreditar: tax,
			MontoTotalDeGastoAplicable: doc.ResumenFactura.TotalComprobante},
		"partial":  {Mensaje: "2", DetalleMensaje: "Uso mixto: crédito parcial & gasto", CondicionImpuesto: "02", MontoTotalImpuestoAcreditar: half},
		"rejected": {Mensaje: "3", DetalleMensaje: "Mercadería <no> recibida"},
		"minimal":  {Mensaje: "1"},
	}
	receptor := doc.Receptor.Identificacion
	minted, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: receptor.Tipo, Identificacion: receptor.Numero,
		Name: "RECEPTOR DE PRUEBA", Key: certmint.TestKey(3)})
	if err != nil {
		t.Fatal(err)
	}
	signed := map[string][]byte{}
	msgs := map[string]*hacienda.MensajeReceptor{}
	var n int64
	for name, a := range answers {
		m, err := hacienda.NewMensajeReceptor(doc, a)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n++
		numbered(t, m, n)
		b, err := hacienda.MarshalMensajeReceptor(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, err := signer.Sign(b, minted.Key, []*x509.Certificate{minted.Leaf, minted.CA.Cert}, signer.PolicyV44)
		if err != nil {
			t.Fatalf("%s: sign: %v", name, err)
		}
		signed[name], msgs[name] = s, m
	}
	return signed, msgs, minted
}

func TestMensajeReceptorXSDValidAndSigned(t *testing.T) {
	signed, _, minted := signedMessages(t)
	xmlcheck.RequireValid(t, "MensajeReceptor_V4.4.xsd", signed)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, minted.CA.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, s := range signed {
		if _, err := signer.Verify(s); err != nil {
			t.Errorf("%s: our verifier: %v", name, err)
		}
		if err := xmlcheck.XMLSec(t, s, ca); err != nil {
			t.Errorf("%s: xmlsec1: %v", name, err)
		}
	}
}

func TestMensajeReceptorXSDRefusesBrokenCopies(t *testing.T) {
	signed, _, _ := signedMessages(t)
	good := signed["accepted"]
	// Moving CodigoActividad after CondicionImpuesto breaks the schema's
	// order; the validator must see it (the test would pass vacuously
	// otherwise).
	i := bytes.Index(good, []byte("<CodigoActividad>"))
	j := bytes.Index(good, []byte("<CondicionImpuesto>"))
	k := bytes.Index(good, []byte("<MontoTotalImpuestoAcreditar>"))
	if i < 0 || j < 0 || k < 0 {
		t.Fatal("elements not found")
	}
	swapped := append(append(append(append([]byte{}, good[:i]...), good[j:k]...), good[i:j]...), good[k:]...)
	res := xmlcheck.Batch(t, "MensajeReceptor_V4.4.xsd", map[string][]byte{
		"good": good, "swapped": swapped,
		"bad consecutivo": bytes.Replace(good, []byte("<NumeroConsecutivoReceptor>"), []byte("<NumeroConsecutivoReceptor>9"), 1),
	})
	for _, r := range res {
		if want := r.Name == "good"; r.Valid != want {
			t.Errorf("%s: valid = %v, want %v (%s)", r.Name, r.Valid, want, r.Output)
		}
	}
}

func TestMensajeReceptorRoundTrip(t *testing.T) {
	signed, msgs, _ := signedMessages(t)
	for name, s := range signed {
		back, err := hacienda.ParseMensajeReceptor(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := msgs[name]
		if !back.FechaEmisionDoc.Equal(want.FechaEmisionDoc) {
			t.Errorf("%s: fecha %v, want %v", name, back.FechaEmisionDoc, want.FechaEmisionDoc)
		}
		again, err := hacienda.MarshalMensajeReceptor(back)
		if err != nil {
			t.Fatalf("%s: rebuild: %v", name, err)
		}
		first, _ := hacienda.MarshalMensajeReceptor(want)
		if !bytes.Equal(again, first) {
			t.Errorf("%s: rebuild differs:\n%s\n%s", name, again, first)
		}
	}
}

func TestParseMensajeReceptorRefuses(t *testing.T) {
	signed, _, _ := signedMessages(t)
	good := signed["minimal"]
	cases := map[string][]byte{
		"not xml":        []byte("<MensajeReceptor"),
		"other root":     bytes.ReplaceAll(good, []byte("MensajeReceptor"), []byte("MensajeHacienda")),
		"no consecutivo": regexpCut(good, "NumeroConsecutivoReceptor"),
		"mensaje 4":      bytes.Replace(good, []byte("<Mensaje>1</Mensaje>"), []byte("<Mensaje>4</Mensaje>"), 1),
		"bad date":       bytes.Replace(good, []byte("<FechaEmisionDoc>2026"), []byte("<FechaEmisionDoc>x026"), 1),
		"repeated":       bytes.Replace(good, []byte("<Mensaje>1</Mensaje>"), []byte("<Mensaje>1</Mensaje><Mensaje>1</Mensaje>"), 1),
	}
	for name, b := range cases {
		if _, err := hacienda.ParseMensajeReceptor(b); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// regexpCut removes the element name (and its content) from b.
func regexpCut(b []byte, name string) []byte {
	i := bytes.Index(b, []byte("<"+name+">"))
	j := bytes.Index(b, []byte("</"+name+">"))
	if i < 0 || j < 0 {
		return b
	}
	return append(append([]byte{}, b[:i]...), b[j+len(name)+3:]...)
}

func TestMarshalMensajeReceptorRefuses(t *testing.T) {
	_, msgs, _ := signedMessages(t)
	m := *msgs["accepted"]
	m.NumeroConsecutivoReceptor = "00100001070000000001" // type 07 with Mensaje 1
	if _, err := hacienda.MarshalMensajeReceptor(&m); err == nil {
		t.Error("a consecutivo of another type was written")
	}
	m = *msgs["accepted"]
	m.TotalFactura = hacienda.Amount{}
	if _, err := hacienda.MarshalMensajeReceptor(&m); err == nil {
		t.Error("a message without TotalFactura was written")
	}
}
