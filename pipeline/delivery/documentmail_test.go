package delivery_test

import (
	"bytes"
	"flag"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/pipeline/delivery"
	"facturad/pipeline/delivery/smtptest"
	"facturad/tenant"
)

var update = flag.Bool("update", false, "rewrite the golden e-mails under testdata/email")

// shownEmail is a message as a mail reader shows it: its From, Reply-To and
// Subject decoded (RFC 2047), its text, and the names of its headers.
type shownEmail struct {
	fromName, fromAddress string
	replyTo               []string
	subject, text         string
	headers               []string
}

func showEmail(t *testing.T, raw []byte) shownEmail {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var s shownEmail
	from, err := mail.ParseAddress(m.Header.Get("From"))
	if err != nil {
		t.Fatalf("From %q: %v", m.Header.Get("From"), err)
	}
	s.fromName, s.fromAddress = from.Name, from.Address
	if rt := m.Header.Get("Reply-To"); rt != "" {
		list, err := mail.ParseAddressList(rt)
		if err != nil {
			t.Fatalf("Reply-To %q: %v", rt, err)
		}
		for _, a := range list {
			s.replyTo = append(s.replyTo, a.Address)
		}
	}
	if s.subject, err = new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject")); err != nil {
		t.Fatalf("Subject %q: %v", m.Header.Get("Subject"), err)
	}
	for k := range m.Header {
		s.headers = append(s.headers, k)
	}
	slices.Sort(s.headers)
	s.text = string(parseParts(t, m)[""])
	return s
}

// golden writes the e-mail as its golden file holds it.
func (s shownEmail) golden() string {
	return "From: " + s.fromName + " <" + s.fromAddress + ">\n" +
		"Reply-To: " + strings.Join(s.replyTo, ", ") + "\n" +
		"Subject: " + s.subject + "\n\n" +
		strings.ReplaceAll(s.text, "\r\n", "\n") + "\n"
}

// accepted stores doc, issued by branch b in ambiente, as accepted with its
// XML, to be e-mailed to the buyer's address.
func (f *fixture) accepted(t *testing.T, b tenant.Branch, ambiente string, doc *hacienda.Document) tenant.Document {
	t.Helper()
	x, err := hacienda.MarshalXML(doc)
	if err != nil {
		t.Fatal(err)
	}
	return f.eventIn(t, b, ambiente, tenant.StateAccepted, []string{"compras@example.com"}, func(d *tenant.Document) {
		d.SignedXML, d.Clave, d.Consecutivo, d.Tipo = x, doc.Clave, doc.NumeroConsecutivo, string(doc.Type)
	})
}

// byClave finds the received message whose text names clave.
func byClave(t *testing.T, msgs []smtptest.Message, clave string) smtptest.Message {
	t.Helper()
	for _, m := range msgs {
		if strings.Contains(showEmail(t, m.Data).text, "Clave: "+clave) {
			return m
		}
	}
	t.Fatalf("no message names clave %s", clave)
	return smtptest.Message{}
}

// The e-mail of each of the seven issued types, as a real SMTP server
// received it and a mail reader shows it, is its golden file
// (testdata/email/<type>.txt; -update rewrites them): the issuer's
// commercial name as the sender's name beside the platform's address, the
// issuer's address to reply to, and a subject and text naming the issuer,
// the type, the number, the clave and the total in its currency.
func TestDocumentEmailGolden(t *testing.T) {
	f := newFixture(t, newSQLite(t))
	_, b := f.company(t, "Dorada S.A.")
	st := smtptest.New(t)
	docs := sample.Documents(3, 7)
	for _, doc := range docs {
		f.accepted(t, b, tenant.AmbienteProduccion, doc)
	}
	f.mailer(t, smtpConfig(t, st), fixedPDF{})
	waitFor(t, func() bool { return len(st.Received()) == len(docs) })
	msgs := st.Received()
	for _, doc := range docs {
		t.Run(doc.Type.Abbrev(), func(t *testing.T) {
			got := showEmail(t, byClave(t, msgs, doc.Clave).Data).golden()
			path := filepath.Join("testdata", "email", doc.Type.Abbrev()+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("the e-mail differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
			}
		})
	}
}

// The e-mail says who issued the document whatever the issuer's name
// holds: accents, ñ, quotes, commas and line breaks come out in the
// reader as the name (line breaks as a space) and never as a header of
// their own; Reply-To is the issuer's addresses, those a server without
// SMTPUTF8 cannot take left out; a purchase invoice's issuer is the XML
// Receptor; a document of the pruebas environment says it has no tax
// value.
func TestEmailSaysWhoIssued(t *testing.T) {
	base := sample.Documents(5, 7)
	byType := func(tp hacienda.DocumentType) *hacienda.Document {
		for _, d := range base {
			if d.Type == tp {
				c := *d
				c.Emisor.CorreoElectronico = slices.Clone(d.Emisor.CorreoElectronico)
				if d.Receptor != nil {
					r := *d.Receptor
					c.Receptor = &r
				}
				return &c
			}
		}
		t.Fatalf("no sample %s", tp)
		return nil
	}
	cases := []struct {
		name     string
		doc      *hacienda.Document
		ambiente string
		mod      func(d *hacienda.Document)

		fromName    string
		replyTo     []string
		subjectHas  []string
		textHas     []string
		textHasNot  []string
		subjectTest bool
	}{
		{name: "ok/commercial name with accents and ñ", doc: byType(hacienda.TypeFE), ambiente: tenant.AmbienteProduccion,
			mod: func(d *hacienda.Document) {
				d.Emisor.Nombre, d.Emisor.NombreComercial = "Ñandú Café y Té Sociedad Anónima", "Ñandú Café"
				d.Emisor.CorreoElectronico = []string{"ventas@nandu.example", "conta@nandu.example"}
			},
			fromName: "Ñandú Café", replyTo: []string{"ventas@nandu.example", "conta@nandu.example"},
			subjectHas: []string{"Factura Electrónica ", " de Ñandú Café por ₡"},
			textHas: []string{"Ñandú Café le envía la Factura Electrónica ", "Emisor: Ñandú Café (Ñandú Café y Té Sociedad Anónima), cédula jurídica 3101123456",
				"Total: ₡", "responda a este correo o escriba a ventas@nandu.example, conta@nandu.example."},
			textHasNot: []string{"PRUEBAS"}},
		{name: "ok/legal name with quotes when no commercial name", doc: byType(hacienda.TypeTE), ambiente: tenant.AmbienteProduccion,
			mod: func(d *hacienda.Document) {
				d.Emisor.Nombre, d.Emisor.NombreComercial = `Distribuidora "El Sol", S.A.`, ""
			},
			fromName: `Distribuidora "El Sol", S.A.`, replyTo: []string{"facturacion@ejemplo.cr"},
			subjectHas: []string{"Tiquete Electrónico ", ` de Distribuidora "El Sol", S.A. por USD `},
			textHas:    []string{`Distribuidora "El Sol", S.A. le envía el Tiquete Electrónico `, "Total: USD "}},
		{name: "ok/line breaks in a name are a space, never a header", doc: byType(hacienda.TypeFE), ambiente: tenant.AmbienteProduccion,
			mod: func(d *hacienda.Document) {
				d.Emisor.NombreComercial = "Evil\r\nBcc: victim@example.com"
			},
			fromName: "Evil Bcc: victim@example.com", replyTo: []string{"facturacion@ejemplo.cr"},
			subjectHas: []string{" de Evil Bcc: victim@example.com por "}},
		{name: "ok/credit note names its reference", doc: byType(hacienda.TypeNC), ambiente: tenant.AmbienteProduccion,
			fromName: "Ejemplo", replyTo: []string{"facturacion@ejemplo.cr"},
			subjectHas: []string{"Nota de Crédito Electrónica "},
			textHas:    []string{"le envía la Nota de Crédito Electrónica ", "Documento de referencia: "}},
		{name: "ok/a purchase invoice's issuer is its receptor", doc: byType(hacienda.TypeFEC), ambiente: tenant.AmbienteProduccion,
			mod: func(d *hacienda.Document) {
				d.Receptor.NombreComercial = "Compradora Ñ"
				d.Receptor.CorreoElectronico = []string{"compras@compradora.example"}
			},
			fromName: "Compradora Ñ", replyTo: []string{"compras@compradora.example"},
			subjectHas: []string{"Factura Electrónica de Compra ", " de Compradora Ñ por "},
			textHas:    []string{"Emisor: Compradora Ñ (Comercializadora Ejemplo Sociedad Anónima)"}},
		{name: "ok/an address outside ASCII is left out of Reply-To without SMTPUTF8", doc: byType(hacienda.TypeFE), ambiente: tenant.AmbienteProduccion,
			mod: func(d *hacienda.Document) {
				d.Emisor.CorreoElectronico = []string{"josé@ñandú.cr", "ventas@ñandú.cr"}
			},
			fromName: "Ejemplo", replyTo: []string{"ventas@xn--and-6ma2c.cr"},
			textHas: []string{"escriba a josé@ñandú.cr, ventas@ñandú.cr."}},
		{name: "ok/pruebas says it has no tax value", doc: byType(hacienda.TypeREP), ambiente: tenant.AmbientePruebas,
			// A REP's Emisor carries no NombreComercial (its schema): the legal name.
			fromName: "Comercializadora Ejemplo Sociedad Anónima", replyTo: []string{"facturacion@ejemplo.cr"}, subjectTest: true,
			subjectHas: []string{"[PRUEBAS] Recibo Electrónico de Pago "},
			textHas:    []string{"PRUEBAS: este comprobante se emitió en un ambiente de pruebas y no tiene validez tributaria.", "le envía el Recibo Electrónico de Pago ", "que se aceptó en el ambiente de pruebas"}},
	}
	f := newFixture(t, newSQLite(t))
	_, b := f.company(t, "Identidad S.A.")
	st := smtptest.New(t)
	for _, tt := range cases {
		if tt.mod != nil {
			tt.mod(tt.doc)
		}
	}
	for i, tt := range cases {
		// Cases of one type: a clave of their own.
		tt.doc.Clave = tt.doc.Clave[:49] + strconv.Itoa(i)
		tt.doc.NumeroConsecutivo = tt.doc.NumeroConsecutivo[:19] + strconv.Itoa(i)
		f.accepted(t, b, tt.ambiente, tt.doc)
	}
	f.mailer(t, smtpConfig(t, st), fixedPDF{})
	waitFor(t, func() bool { return len(st.Received()) == len(cases) })
	msgs := st.Received()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			m := byClave(t, msgs, tt.doc.Clave)
			s := showEmail(t, m.Data)
			if s.fromName != tt.fromName || s.fromAddress != "facturas@example.com" {
				t.Errorf("From %q <%s>, want %q <facturas@example.com>", s.fromName, s.fromAddress, tt.fromName)
			}
			if m.From != "facturas@example.com" || !slices.Equal(m.To, []string{"compras@example.com"}) {
				t.Errorf("envelope from %s to %v", m.From, m.To)
			}
			if !slices.Equal(s.replyTo, tt.replyTo) {
				t.Errorf("Reply-To %v, want %v", s.replyTo, tt.replyTo)
			}
			want := []string{"Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Reply-To", "Subject", "To"}
			if !slices.Equal(s.headers, want) {
				t.Errorf("headers %v, want %v", s.headers, want)
			}
			if strings.HasPrefix(s.subject, "[PRUEBAS] ") != tt.subjectTest {
				t.Errorf("subject %q: test mark %v", s.subject, !tt.subjectTest)
			}
			for _, w := range append(tt.subjectHas, tt.doc.NumeroConsecutivo) {
				if !strings.Contains(s.subject, w) {
					t.Errorf("subject %q does not say %q", s.subject, w)
				}
			}
			for _, w := range append(tt.textHas, "Clave: "+tt.doc.Clave, "Número consecutivo: "+tt.doc.NumeroConsecutivo) {
				if !strings.Contains(s.text, w) {
					t.Errorf("the text does not say %q:\n%s", w, s.text)
				}
			}
			for _, w := range tt.textHasNot {
				if strings.Contains(s.text, w) {
					t.Errorf("the text says %q:\n%s", w, s.text)
				}
			}
			// The total, spelled independently of the mailer, as the PDF
			// prints it.
			total := figures(tt.doc.ResumenFactura.TotalComprobante.Decimal().StringFixed(5))
			if !strings.Contains(s.subject, total) || !strings.Contains(s.text, "Total: ") || !strings.Contains(s.text, total) {
				t.Errorf("total %s missing: subject %q, text:\n%s", total, s.subject, s.text)
			}
		})
	}
}

// The text of a document in another currency gives its total in colones
// at its exchange rate, under the total, as its PDF prints it: USD
// 1.819,10 at 512,35 is 932.015,885, ₡932.015,89 to cents half away from
// zero; EUR 0,01 at 587,1 is ₡5,87. A document in colones has no such
// line. The subject keeps the total in the document's currency alone.
func TestEmailColonEquivalent(t *testing.T) {
	f := newFixture(t, newSQLite(t))
	_, b := f.company(t, "Divisas S.A.")
	st := smtptest.New(t)
	tests := []struct {
		currency, total, rate string
		wantTotal, want       string // want "" for no equivalent
	}{
		{"USD", "1819.10", "512.35", "USD 1.819,10", "Equivalente en colones (tipo de cambio 512,35): ₡932.015,89"},
		{"EUR", "0.01", "587.1", "EUR 0,01", "Equivalente en colones (tipo de cambio 587,1): ₡5,87"},
		{"CRC", "1819.10", "1", "₡1.819,10", ""},
	}
	docs := sample.Documents(8, len(tests))
	for i, tt := range tests {
		rf := &docs[i].ResumenFactura
		rf.CodigoTipoMoneda = hacienda.CodigoTipoMoneda{CodigoMoneda: tt.currency, TipoCambio: hacienda.MustAmount(tt.rate)}
		rf.TotalComprobante = hacienda.MustAmount(tt.total)
		f.accepted(t, b, tenant.AmbienteProduccion, docs[i])
	}
	f.mailer(t, smtpConfig(t, st), fixedPDF{})
	waitFor(t, func() bool { return len(st.Received()) == len(tests) })
	msgs := st.Received()
	for i, tt := range tests {
		t.Run(tt.currency, func(t *testing.T) {
			s := showEmail(t, byClave(t, msgs, docs[i].Clave).Data)
			total := "Total: " + tt.wantTotal
			if !strings.Contains(s.text, total+"\r\n") {
				t.Fatalf("no %q:\n%s", total, s.text)
			}
			if tt.want == "" {
				if strings.Contains(s.text, "Equivalente en colones") {
					t.Errorf("a document in colones gives an equivalent:\n%s", s.text)
				}
			} else if !strings.Contains(s.text, total+"\r\n"+tt.want+"\r\n") {
				t.Errorf("no %q under the total:\n%s", tt.want, s.text)
			}
			if !strings.HasSuffix(s.subject, " por "+tt.wantTotal) {
				t.Errorf("subject %q, want it to end in the total %s alone", s.subject, tt.wantTotal)
			}
		})
	}
}

// With the sandbox as the tax authority every document's e-mail is marked
// as a test, even one numbered in producción.
func TestEmailSandboxMarked(t *testing.T) {
	f := newFixture(t, newSQLite(t))
	_, b := f.company(t, "Simulada S.A.")
	st := smtptest.New(t)
	doc := sample.Documents(6, 1)[0]
	f.accepted(t, b, tenant.AmbienteProduccion, doc)
	f.mailerWith(t, smtpConfig(t, st), nil, func(o *delivery.MailerOptions) { o.Sandbox = true })
	waitFor(t, func() bool { return len(st.Received()) == 1 })
	s := showEmail(t, st.Received()[0].Data)
	if !strings.HasPrefix(s.subject, "[PRUEBAS] Factura Electrónica ") || !strings.HasPrefix(s.text, "PRUEBAS: ") {
		t.Errorf("subject %q, text:\n%s", s.subject, s.text)
	}
	if !strings.Contains(s.text, "Archivos adjuntos: el comprobante firmado (XML) y la respuesta de Hacienda (XML).") {
		t.Errorf("without a PDF the text names two attachments:\n%s", s.text)
	}
}

// A document whose stored XML cannot be read is not e-mailed: it fails
// once, for good, saying why.
func TestEmailUnreadableXMLFails(t *testing.T) {
	f := newFixture(t, newSQLite(t))
	_, b := f.company(t, "Ilegible S.A.")
	st := smtptest.New(t)
	d := f.event(t, b, tenant.StateAccepted, []string{"compras@example.com"}, func(d *tenant.Document) {
		d.SignedXML = []byte(`<?xml version="1.0"?><FacturaElectronica/>`)
	})
	f.mailer(t, smtpConfig(t, st), fixedPDF{})
	waitFor(t, func() bool {
		es := f.emails(t, d)
		return len(es) == 1 && es[0].State() == tenant.DeliveryFailed
	})
	e := f.emails(t, d)[0]
	if e.Attempts != 1 || !strings.Contains(e.LastError, "signed XML cannot be read") || len(st.Received()) != 0 {
		t.Fatalf("e-mail %+v, %d sent", e, len(st.Received()))
	}
}
