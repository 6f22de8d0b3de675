package pdf_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/hacienda/pdf/pdfcheck"
	"facturad/hacienda/sample"
)

// viaXML writes a document as XML and reads it back, as the service does
// with the signed XML it stores: the PDF is drawn from what was written.
func viaXML(t testing.TB, d *hacienda.Document) *hacienda.Document {
	t.Helper()
	b, err := hacienda.MarshalXML(d)
	if err != nil {
		t.Fatalf("MarshalXML %s: %v", d.Type.Abbrev(), err)
	}
	back, err := hacienda.ParseXML(b)
	if err != nil {
		t.Fatalf("ParseXML %s: %v", d.Type.Abbrev(), err)
	}
	return back
}

func render(t testing.TB, in pdf.Input) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := pdf.Render(&b, in); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return b.Bytes()
}

var spaces = regexp.MustCompile(`\s+`)

// flat collapses every run of white space to one space, so that a text
// the PDF wraps over several lines of its cell reads as one.
func flat(s string) string { return spaces.ReplaceAllString(s, " ") }

// figures writes an amount the way the PDF is expected to (120.500,50):
// an independent spelling of the format, for the assertions.
func figures(a hacienda.Amount) string {
	s := a.Decimal().StringFixed(5)
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	var groups []string
	for len(whole) > 3 {
		groups = append([]string{whole[len(whole)-3:]}, groups...)
		whole = whole[:len(whole)-3]
	}
	groups = append([]string{whole}, groups...)
	return strings.Join(groups, ".") + "," + frac
}

var titles = map[hacienda.DocumentType]string{
	hacienda.TypeFE: "Factura Electrónica", hacienda.TypeND: "Nota de Débito Electrónica",
	hacienda.TypeNC: "Nota de Crédito Electrónica", hacienda.TypeTE: "Tiquete Electrónico",
	hacienda.TypeFEC: "Factura Electrónica de Compra", hacienda.TypeFEE: "Factura Electrónica de Exportación",
	hacienda.TypeREP: "Recibo Electrónico de Pago",
}

// TestRenderEveryType renders 40 generated documents on letter paper,
// which cover every document type and every feature of the generator
// (discounts, exonerations, specific taxes, other charges, foreign
// currencies, references, several means of payment), each read back from
// its XML, and reads every PDF with pdftotext: the title, clave, consecutivo,
// parties, every line's description, the total in figures and in words,
// the references and the state must all be there.
func TestRenderEveryType(t *testing.T) {
	seen := map[hacienda.DocumentType]bool{}
	for i, d := range sample.Documents(14, 40) {
		d := viaXML(t, d)
		seen[d.Type] = true
		t.Run(fmt.Sprintf("ok/%02d-%s", i, d.Type.Abbrev()), func(t *testing.T) {
			b := render(t, pdf.Input{Document: d, Estado: "01", Formato: pdf.FormatoCarta})
			text := flat(pdfcheck.Text(t, b))
			rf := d.ResumenFactura
			moneda := rf.CodigoTipoMoneda.CodigoMoneda
			words, err := pdf.Words(rf.TotalComprobante.Decimal(), moneda)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				titles[d.Type],
				"Clave numérica " + d.Clave,
				"Consecutivo " + d.NumeroConsecutivo,
				"Fecha de emisión " + d.FechaEmision.In(hacienda.CostaRica).Format("02/01/2006 15:04:05"),
				"Estado 01 Aceptado por Hacienda",
				flat(d.Emisor.Nombre),
				d.Emisor.Identificacion.Numero,
				"Total del comprobante",
				moneda + " " + figures(rf.TotalComprobante),
				"Son: " + words,
				"Moneda " + moneda,
				"Página 1 de",
			}
			if d.Receptor != nil {
				want = append(want, flat(d.Receptor.Nombre))
				if !d.Receptor.Identificacion.IsZero() {
					want = append(want, d.Receptor.Identificacion.Numero)
				}
			} else {
				want = append(want, "Sin receptor identificado")
			}
			for _, l := range d.DetalleServicio {
				want = append(want, flat(l.Detalle), figures(l.MontoTotalLinea))
				if l.CodigoCABYS != "" {
					want = append(want, l.CodigoCABYS)
				}
			}
			for _, oc := range d.OtrosCargos {
				want = append(want, flat(oc.Detalle), figures(oc.MontoCargo))
			}
			for _, ir := range d.InformacionReferencia {
				want = append(want, ir.Numero, flat(ir.Razon))
			}
			for _, tax := range rf.TotalDesgloseImpuesto {
				want = append(want, figures(tax.TotalMontoImpuesto))
			}
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("%q is not in the PDF's text:\n%s", w, text)
				}
			}
		})
	}
	for _, typ := range hacienda.DocumentTypes {
		if !seen[typ] {
			t.Errorf("no %s rendered", typ.Abbrev())
		}
	}
}

// TestQRCodeDecodesToClave renders one document of each type and reads the
// QR code back from the first page as a 150-dpi scan shows it.
func TestQRCodeDecodesToClave(t *testing.T) {
	for _, d := range sample.Documents(3, len(hacienda.DocumentTypes)) {
		t.Run("ok/"+d.Type.Abbrev(), func(t *testing.T) {
			b := render(t, pdf.Input{Document: viaXML(t, d), Estado: "04"})
			codes := pdfcheck.QRCodes(t, b, 1)
			if len(codes) != 1 || codes[0] != d.Clave {
				t.Fatalf("QR codes on page 1: %q, want the clave %s", codes, d.Clave)
			}
		})
	}
}

// TestAccentsAndEnies builds a document whose parties and lines hold every
// Spanish letter and reads them back intact; characters that the standard
// fonts cannot print become a readable stand-in or "?", never a broken
// file.
func TestAccentsAndEnies(t *testing.T) {
	d := sample.Documents(5, 1)[0] // an FE
	d.Emisor.Nombre = "Peña Muñoz y Compañía, Sociedad Anónima"
	d.Receptor.Nombre = "Asociación Pingüino Ñandú de Cartago"
	d.DetalleServicio[0].Detalle = "Señalización ÁÉÍÓÚÜÑ áéíóúüñ ¿qué? ¡sí! «año» – 25 °C, 3 m² € Ω 漢字"
	d = viaXML(t, d)
	b := render(t, pdf.Input{Document: d, Estado: "02", MensajeHacienda: "Rechazado: el código de actividad no está inscrito."})
	text := flat(pdfcheck.Text(t, b))
	for _, w := range []string{
		"Peña Muñoz y Compañía, Sociedad Anónima",
		"Asociación Pingüino Ñandú de Cartago",
		"Señalización ÁÉÍÓÚÜÑ áéíóúüñ ¿qué? ¡sí! «año» – 25 °C, 3 m² € Ohm ??",
		"Cédula jurídica", "Condición de venta", "Fecha de emisión", "Código CABYS", "Página 1 de 1",
		"Estado 02 Rechazado por Hacienda",
		"Mensaje del Ministerio de Hacienda",
		"Rechazado: el código de actividad no está inscrito.",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("%q is not in the PDF's text:\n%s", w, text)
		}
	}
	info := pdfcheck.Info(t, b)
	if info["Title"] != "Factura Electrónica "+d.NumeroConsecutivo || info["Subject"] != "Clave "+d.Clave {
		t.Errorf("metadata: %v", info)
	}
}

// longDocument is an FE of n lines, each with its own description,
// calculated by the engine.
func longDocument(t testing.TB, n int) *hacienda.Document {
	t.Helper()
	req, err := sample.LongFE(21, n)
	if err != nil {
		t.Fatal(err)
	}
	d, err := hacienda.NewDocument(req, sample.Issuer())
	if err != nil {
		t.Fatalf("NewDocument: %v", err)
	}
	d.FechaEmision = time.Date(2026, 11, 21, 10, 30, 0, 0, hacienda.CostaRica)
	d.NumeroConsecutivo = "00100001010000004242"
	d.Clave = "50621112600310112345600100001010000004242100004242"
	return viaXML(t, d)
}

// TestLongDocumentPaginates renders 200 lines: every page says "Página i
// de N", repeats the document's identification and the lines' header, and
// every line appears once, in order; the totals close the last page.
func TestLongDocumentPaginates(t *testing.T) {
	d := longDocument(t, 200)
	b := render(t, pdf.Input{Document: d, Estado: "01"})
	pages := pdfcheck.Pages(t, b)
	n := len(pages)
	if n < 4 {
		t.Fatalf("200 lines on %d pages", n)
	}
	next := 1 // the next line expected
	for i, p := range pages {
		f := flat(p)
		if want := fmt.Sprintf("Página %d de %d", i+1, n); !strings.Contains(f, want) {
			t.Errorf("page %d: no %q", i+1, want)
		}
		if !strings.Contains(f, d.NumeroConsecutivo) || !strings.Contains(f, d.Clave) {
			t.Errorf("page %d does not identify the document", i+1)
		}
		if i > 0 && !strings.Contains(f, "Clave "+d.Clave+" (continuación)") {
			t.Errorf("page %d has no continuation heading", i+1)
		}
		onPage := 0
		for next <= 200 {
			line := fmt.Sprintf("Artículo número %04d de señalización vial", next)
			if !strings.Contains(f, line) {
				break
			}
			onPage++
			next++
		}
		if onPage > 0 {
			for _, h := range []string{"Código CABYS", "Cantidad", "Unidad", "Detalle", "Precio unitario", "Descuento", "Impuesto", "Total de línea"} {
				if !strings.Contains(f, h) {
					t.Errorf("page %d has lines but no %q header", i+1, h)
				}
			}
		}
		if i < n-1 && onPage == 0 {
			t.Errorf("page %d (not the last) holds no line", i+1)
		}
	}
	if next != 201 {
		t.Fatalf("lines found in order up to %d of 200", next-1)
	}
	whole := flat(strings.Join(pages, " "))
	for k := 1; k <= 200; k++ {
		line := fmt.Sprintf("Artículo número %04d de", k)
		if c := strings.Count(whole, line); c != 1 {
			t.Errorf("line %d appears %d times", k, c)
		}
	}
	last := flat(pages[n-1])
	words, _ := pdf.Words(d.ResumenFactura.TotalComprobante.Decimal(), "CRC")
	for _, w := range []string{"Total del comprobante", "CRC " + figures(d.ResumenFactura.TotalComprobante), "Son: " + words} {
		if !strings.Contains(last, w) {
			t.Errorf("last page: no %q", w)
		}
	}
	if codes := pdfcheck.QRCodes(t, b, 1); len(codes) != 1 || codes[0] != d.Clave {
		t.Errorf("QR on page 1: %q", codes)
	}
}

// TestRenderIsDeterministic: the same document gives the same bytes (its
// creation date is its issue date), so a PDF can be cached or compared.
func TestRenderIsDeterministic(t *testing.T) {
	d := viaXML(t, sample.Documents(8, 3)[2])
	a := render(t, pdf.Input{Document: d, Estado: "01"})
	b := render(t, pdf.Input{Document: d, Estado: "01"})
	if !bytes.Equal(a, b) {
		t.Fatal("two renders of one document differ")
	}
	if !bytes.HasPrefix(a, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %.20q", a)
	}
	c := render(t, pdf.Input{Document: d, Estado: "02"})
	if bytes.Equal(a, c) {
		t.Fatal("the state does not change the PDF")
	}
}

func TestRenderErrors(t *testing.T) {
	if err := pdf.Render(&bytes.Buffer{}, pdf.Input{}); !errors.Is(err, pdf.ErrNoDocument) {
		t.Errorf("no document: %v", err)
	}
	if err := pdf.RenderSignedXML(&bytes.Buffer{}, []byte("<html/>"), "01", ""); !errors.Is(err, hacienda.ErrNotV44Document) {
		t.Errorf("not a v4.4 document: %v", err)
	}
	if _, err := pdf.FromSignedXML(nil, "01"); err == nil {
		t.Error("empty XML accepted")
	}
}

// TestRenderSignedXML goes from the XML bytes to the PDF in one call.
func TestRenderSignedXML(t *testing.T) {
	d := sample.Documents(9, 1)[0]
	x, err := hacienda.MarshalXML(d)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := pdf.RenderSignedXML(&b, x, "00", ""); err != nil {
		t.Fatal(err)
	}
	text := flat(pdfcheck.Text(t, b.Bytes()))
	for _, w := range []string{d.Clave, d.NumeroConsecutivo, "Estado 00 Pendiente de envío"} {
		if !strings.Contains(text, w) {
			t.Errorf("no %q in %s", w, text)
		}
	}
}

// fixture is the document of testdata/NAME.request.json, issued by the
// sample issuer, numbered and read back from its XML.
func fixture(t testing.TB, name string) *hacienda.Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".request.json"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := hacienda.DecodeSendRequest(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	d, err := hacienda.NewDocument(req, sample.Issuer())
	if err != nil {
		t.Fatalf("%s: NewDocument: %v", name, err)
	}
	d.FechaEmision = time.Date(2026, 11, 21, 10, 30, 0, 0, hacienda.CostaRica)
	d.NumeroConsecutivo = "00100001" + string(d.Type) + "0000004242"
	d.Clave = "506211126003101123456" + d.NumeroConsecutivo + "100004242"
	return viaXML(t, d)
}
