package pdf_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"strings"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/hacienda/pdf/pdfcheck"
	"facturad/hacienda/sample"
)

// The printed document's parts the issuer and the buyer asked for: the
// authorisation legend, the test mark, the names of places, the colón
// equivalent, the exonerated line's tax, the issuer's logo and notes, and
// the 80 mm ticket. Every check reads the PDF back with poppler.

const (
	markTitle = "SIN VALIDEZ TRIBUTARIA — AMBIENTE DE PRUEBAS"
	legend    = "Autorizada mediante resolución N° MH-DGT-RES-0027-2024 del 13 de noviembre de 2024"
	// ticketWidth is 80 mm in points.
	ticketWidth = 80 / 25.4 * 72
)

// TestLegendOnEveryPage: every page of a long letter document and of a
// long ticket ends with the authorisation legend.
func TestLegendOnEveryPage(t *testing.T) {
	d := longDocument(t, 120)
	for _, f := range []pdf.Formato{pdf.FormatoCarta, pdf.FormatoTicket} {
		t.Run("ok/"+string(f), func(t *testing.T) {
			pages := pdfcheck.Pages(t, render(t, pdf.Input{Document: d, Estado: "01", Formato: f}))
			if len(pages) < 2 {
				t.Fatalf("120 lines on %d page(s)", len(pages))
			}
			for i, p := range pages {
				if !strings.Contains(flat(p), legend) {
					t.Errorf("page %d has no legend:\n%s", i+1, flat(p))
				}
			}
		})
	}
}

// TestTestMark: a document of the tax authority's test environment or of
// the sandbox says on every page that it has no validity, its state is
// never the plain "Aceptado por Hacienda", and its title says so too; a
// production document (or one whose environment is not given) has none
// of it.
func TestTestMark(t *testing.T) {
	long := longDocument(t, 120)
	tests := []struct {
		name     string
		ambiente pdf.Ambiente
		formato  pdf.Formato
		marked   bool
		estado   string // the state line, flattened
	}{
		{"ok/produccion carta", pdf.AmbienteProduccion, pdf.FormatoCarta, false, "Estado 01 Aceptado por Hacienda"},
		{"ok/unsaid carta", "", pdf.FormatoCarta, false, "Estado 01 Aceptado por Hacienda"},
		{"ok/produccion ticket", pdf.AmbienteProduccion, pdf.FormatoTicket, false, "Estado: 01 Aceptado por Hacienda"},
		{"marked/pruebas carta", pdf.AmbientePruebas, pdf.FormatoCarta, true, "Estado 01 Aceptado por Hacienda (ambiente de pruebas, sin validez)"},
		{"marked/pruebas ticket", pdf.AmbientePruebas, pdf.FormatoTicket, true, "Estado: 01 Aceptado por Hacienda (ambiente de pruebas, sin validez)"},
		{"marked/sandbox carta", pdf.AmbienteSandbox, pdf.FormatoCarta, true, "Estado 01 Aceptado por el simulador (sin validez)"},
		{"marked/sandbox ticket", pdf.AmbienteSandbox, pdf.FormatoTicket, true, "Estado: 01 Aceptado por el simulador (sin validez)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := render(t, pdf.Input{Document: long, Estado: "01", Ambiente: tt.ambiente, Formato: tt.formato})
			pages := pdfcheck.Pages(t, b)
			if len(pages) < 2 {
				t.Fatalf("120 lines on %d page(s)", len(pages))
			}
			first := flat(pages[0])
			if !strings.Contains(first, tt.estado) {
				t.Errorf("no %q on the first page:\n%s", tt.estado, first)
			}
			for i, p := range pages {
				p = flat(p)
				// The mark's title in the footer, and the watermark.
				if got := strings.Contains(p, markTitle) && strings.Count(p, "SIN VALIDEZ") >= 2; got != tt.marked {
					t.Errorf("page %d: marked %v, want %v:\n%s", i+1, got, tt.marked, p)
				}
				if !tt.marked && strings.Contains(p, "SIN VALIDEZ") {
					t.Errorf("page %d of a valid document says SIN VALIDEZ", i+1)
				}
			}
			if tt.ambiente == pdf.AmbienteSandbox && strings.Contains(first, "Aceptado por Hacienda") {
				t.Errorf("the sandbox's verdict is printed as the tax authority's:\n%s", first)
			}
			title := pdfcheck.Info(t, b)["Title"]
			if got := strings.Contains(title, "sin validez"); got != tt.marked {
				t.Errorf("title %q", title)
			}
			explanation := map[pdf.Ambiente]string{
				pdf.AmbientePruebas: "Emitido en el ambiente de pruebas del Ministerio de Hacienda: no es un comprobante electrónico válido.",
				pdf.AmbienteSandbox: "no fue enviado al Ministerio de Hacienda y no es un comprobante electrónico.",
			}[tt.ambiente]
			if explanation != "" && !strings.Contains(first, explanation) {
				t.Errorf("no %q:\n%s", explanation, first)
			}
		})
	}
}

// TestPlaceNames: provinces, cantons and districts print by their
// official names; a code the catalogue does not have prints as the code.
func TestPlaceNames(t *testing.T) {
	d := fixture(t, "exonerated-usd")
	for _, f := range []pdf.Formato{pdf.FormatoCarta, pdf.FormatoTicket} {
		text := flat(pdfcheck.Text(t, render(t, pdf.Input{Document: d, Formato: f})))
		for _, w := range []string{
			"Dirección: San José, San José, Carmen, Barrio Amón",                      // the issuer: 1, 01, 01
			"Dirección: Heredia, Heredia, San Francisco, Del parque 200 metros norte", // 4, 01, 03
		} {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q:\n%s", f, w, text)
			}
		}
	}
	d.Receptor.Ubicacion.Canton, d.Receptor.Ubicacion.Distrito = "99", "07"
	text := flat(pdfcheck.Text(t, render(t, pdf.Input{Document: d})))
	if w := "Dirección: Heredia, cantón 99, distrito 07, Del parque"; !strings.Contains(text, w) {
		t.Errorf("unknown codes: no %q:\n%s", w, text)
	}
}

// TestColonEquivalent: a document in dollars shows its total in colones
// at its exchange rate (1.819,10 × 512,35 = 932.015,885, to cents half
// away from zero); one in colones does not.
func TestColonEquivalent(t *testing.T) {
	d := fixture(t, "exonerated-usd")
	if got := d.ResumenFactura.TotalComprobante.String(); got != "1819.1" {
		t.Fatalf("the fixture's total is %s", got)
	}
	for _, f := range []pdf.Formato{pdf.FormatoCarta, pdf.FormatoTicket} {
		text := flat(pdfcheck.Text(t, render(t, pdf.Input{Document: d, Formato: f})))
		for _, w := range []string{"USD 1.819,10", "Equivalente en colones (tipo de cambio 512,35)", "CRC 932.015,89"} {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q:\n%s", f, w, text)
			}
		}
	}
	crc := viaXML(t, sample.Documents(5, 1)[0])
	if m := crc.ResumenFactura.CodigoTipoMoneda.CodigoMoneda; m != "CRC" {
		t.Fatalf("sample in %s", m)
	}
	if text := pdfcheck.Text(t, render(t, pdf.Input{Document: crc})); strings.Contains(text, "Equivalente en colones") {
		t.Errorf("a document in colones shows an equivalent:\n%s", text)
	}
}

// TestColonEquivalentFigure: the equivalent the PDF prints and the e-mail
// quotes is the total times the rate to cents half away from zero, with
// the rate in the label; none in colones, without a currency or without a
// positive rate.
func TestColonEquivalentFigure(t *testing.T) {
	for _, tt := range []struct {
		currency, total, rate string
		label, crc            string // label "" for none
	}{
		{"USD", "1819.10", "512.35", "Equivalente en colones (tipo de cambio 512,35)", "932015.89"},
		{"USD", "1819.1", "512.3", "Equivalente en colones (tipo de cambio 512,3)", "931924.93"},
		{"EUR", "0.00999", "587.1", "Equivalente en colones (tipo de cambio 587,1)", "5.87"},
		{"USD", "-10.001", "500.5", "Equivalente en colones (tipo de cambio 500,5)", "-5005.5"},
		{"CRC", "1819.10", "1", "", ""},
		{"", "1819.10", "512.35", "", ""},
		{"USD", "1819.10", "", "", ""},
		{"USD", "1819.10", "0", "", ""},
	} {
		rf := hacienda.ResumenFactura{TotalComprobante: hacienda.MustAmount(tt.total)}
		rf.CodigoTipoMoneda.CodigoMoneda = tt.currency
		if tt.rate != "" {
			rf.CodigoTipoMoneda.TipoCambio = hacienda.MustAmount(tt.rate)
		}
		label, crc, ok := pdf.ColonEquivalent(rf)
		if ok != (tt.label != "") || label != tt.label || (ok && crc.Decimal().String() != tt.crc) {
			t.Errorf("%s %s at %q: %q %s %v, want %q %s", tt.currency, tt.total, tt.rate, label, crc.Decimal(), ok, tt.label, tt.crc)
		}
	}
}

// TestExoneratedLineTax: the tax column of a fully exonerated line shows
// the tax its total holds (none), with the gross tax and the exoneration
// under it; the line's total is its subtotal. A taxed line beside it shows
// its tax as before.
func TestExoneratedLineTax(t *testing.T) {
	d := fixture(t, "exonerated-usd")
	l := d.DetalleServicio[0]
	if l.Impuesto[0].Monto.String() != "221.793" || l.Impuesto[0].Exoneracion.MontoExoneracion.String() != "221.793" || l.ImpuestoNeto.String() != "0" {
		t.Fatalf("fixture line 1: monto %s, exonerado %s, neto %s", l.Impuesto[0].Monto, l.Impuesto[0].Exoneracion.MontoExoneracion, l.ImpuestoNeto)
	}
	text := flat(pdfcheck.Text(t, render(t, pdf.Input{Document: d, Formato: pdf.FormatoCarta})))
	for _, w := range []string{
		// price, tax column (net, gross, exonerated), line total
		"1.706,10 0,00 IVA 13%: 221,793 Exonerado: -221,793 1.706,10",
		"100,00 13,00 IVA 13% 113,00",
		"Total impuesto 13,00",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("no %q:\n%s", w, text)
		}
	}
	ticket := flat(pdfcheck.Text(t, render(t, pdf.Input{Document: d, Formato: pdf.FormatoTicket})))
	if w := "1 Unid × 1.706,10 1.706,10 Impuesto 0,00 (IVA 13%: 221,793; Exonerado: -221,793)"; !strings.Contains(ticket, w) {
		t.Errorf("ticket: no %q:\n%s", w, ticket)
	}
}

// TestNotes: the issuer's notes print a paragraph a line, after the
// document, on both layouts; none prints no title.
func TestNotes(t *testing.T) {
	d := fixture(t, "exonerated-usd")
	notes := "Cuenta IBAN CR05015202001026284066, Banco Nacional\n\n  SINPE Móvil 8888-8888  \nNo se aceptan devoluciones después de 30 días"
	for _, f := range []pdf.Formato{pdf.FormatoCarta, pdf.FormatoTicket} {
		text := pdfcheck.Text(t, render(t, pdf.Input{Document: d, Formato: f, Notas: notes}))
		for _, w := range []string{"Notas del emisor\n", "Cuenta IBAN CR05015202001026284066, Banco Nacional\n", "SINPE Móvil 8888-8888\n"} {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q:\n%s", f, w, text)
			}
		}
		if !strings.Contains(flat(text), "No se aceptan devoluciones después de 30 días") {
			t.Errorf("%s: the last note is missing", f)
		}
		if plain := pdfcheck.Text(t, render(t, pdf.Input{Document: d, Formato: f})); strings.Contains(plain, "Notas del emisor") {
			t.Errorf("%s: notes' title without notes", f)
		}
	}
}

// TestTicket: a Tiquete Electrónico prints on an 80 mm ticket unless
// letter paper is asked for; any type prints as a ticket when asked; a
// long ticket continues on further pages as tall as their content, with
// every line once, and the QR code reads back.
func TestTicket(t *testing.T) {
	var te *hacienda.Document
	for _, d := range sample.Documents(14, 8) {
		if d.Type == hacienda.TypeTE {
			te = viaXML(t, d)
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.05 }
	t.Run("ok/TE by default", func(t *testing.T) {
		b := render(t, pdf.Input{Document: te, Estado: "01"})
		sizes := pdfcheck.PageSizes(t, b)
		if len(sizes) != 1 || !near(sizes[0][0], ticketWidth) || sizes[0][1] > 500/25.4*72 || sizes[0][1] < 100/25.4*72 {
			t.Fatalf("a TE's pages: %v, want one 226.77 pt wide", sizes)
		}
		text := flat(pdfcheck.Text(t, b))
		for _, w := range []string{"Tiquete Electrónico", "Clave numérica " + te.Clave, "Consecutivo: " + te.NumeroConsecutivo,
			"Total del comprobante", legend, "Página 1 de 1"} {
			if !strings.Contains(text, w) {
				t.Errorf("no %q:\n%s", w, text)
			}
		}
		for _, l := range te.DetalleServicio {
			if !strings.Contains(text, fmt.Sprintf("%d. %s", l.NumeroLinea, flat(l.Detalle))) || !strings.Contains(text, figures(l.MontoTotalLinea)) {
				t.Errorf("line %d is missing:\n%s", l.NumeroLinea, text)
			}
		}
		if codes := pdfcheck.QRCodes(t, b, 1); len(codes) != 1 || codes[0] != te.Clave {
			t.Errorf("QR codes %q", codes)
		}
	})
	t.Run("ok/TE on letter paper when asked", func(t *testing.T) {
		sizes := pdfcheck.PageSizes(t, render(t, pdf.Input{Document: te, Formato: pdf.FormatoCarta}))
		if !near(sizes[0][0], 612) || !near(sizes[0][1], 792) {
			t.Errorf("page size %v, want Letter", sizes[0])
		}
	})
	t.Run("ok/a long FE as a ticket", func(t *testing.T) {
		d := longDocument(t, 120)
		b := render(t, pdf.Input{Document: d, Formato: pdf.FormatoTicket})
		sizes := pdfcheck.PageSizes(t, b)
		if len(sizes) < 2 {
			t.Fatalf("120 lines on %d ticket page(s)", len(sizes))
		}
		for i, s := range sizes {
			if !near(s[0], ticketWidth) || s[1] > 500/25.4*72+0.01 {
				t.Errorf("page %d: %v", i+1, s)
			}
		}
		pages := pdfcheck.Pages(t, b)
		whole := flat(strings.Join(pages, " "))
		for k := 1; k <= 120; k++ {
			if c := strings.Count(whole, fmt.Sprintf("%d. Artículo número %04d de", k, k)); c != 1 {
				t.Errorf("line %d appears %d times", k, c)
			}
		}
		for i, p := range pages {
			if w := fmt.Sprintf("Página %d de %d", i+1, len(pages)); !strings.Contains(flat(p), w) {
				t.Errorf("page %d: no %q", i+1, w)
			}
		}
	})
}

// TestLogo: a PNG logo (with transparency) is embedded decoded, with its
// soft mask; a JPEG goes in as it is (DCT); the logo is written once even
// when the document runs onto several pages, and prints on both layouts.
func TestLogo(t *testing.T) {
	pngLogo := encodePNG(t, gradient(240, 80, true))
	jpegLogo := encodeJPEG(t, gradient(200, 100, false))
	long := longDocument(t, 120)
	tests := []struct {
		name      string
		file      []byte
		encodings []string // of the image, then its mask
	}{
		{"ok/png with alpha", pngLogo, []string{"image", "image"}},
		{"ok/jpeg", jpegLogo, []string{"jpeg"}},
	}
	for _, tt := range tests {
		for _, f := range []pdf.Formato{pdf.FormatoCarta, pdf.FormatoTicket} {
			t.Run(tt.name+"/"+string(f), func(t *testing.T) {
				l, err := pdf.ParseLogo(tt.file)
				if err != nil {
					t.Fatal(err)
				}
				b := render(t, pdf.Input{Document: long, Formato: f, Logo: l})
				imgs := pdfcheck.Images(t, b)
				w, h := l.Size()
				if len(imgs) != len(tt.encodings) {
					t.Fatalf("images %+v, want %d on page 1", imgs, len(tt.encodings))
				}
				for i, im := range imgs {
					if im.Page != 1 || im.Width != w || im.Height != h || im.Encoding != tt.encodings[i] {
						t.Errorf("image %d: %+v, want %d × %d %s on page 1", i, im, w, h, tt.encodings[i])
					}
				}
				if len(imgs) == 2 && imgs[1].Type != "smask" {
					t.Errorf("no soft mask: %+v", imgs)
				}
				if n := pdfcheck.PageCount(t, b); n < 2 {
					t.Errorf("%d page(s)", n)
				}
			})
		}
	}
}

// TestParseLogo: what is taken and what is refused, with the reason.
func TestParseLogo(t *testing.T) {
	gray := image.NewGray(image.Rect(0, 0, 50, 20))
	pal := image.NewPaletted(image.Rect(0, 0, 30, 30), color.Palette{color.Black, color.White, color.RGBA{200, 0, 0, 255}})
	bomb := pngHeader(t, 20000, 20000)
	tests := []struct {
		name string
		file []byte
		w, h int
		err  error
	}{
		{"ok/png rgba", encodePNG(t, gradient(300, 100, true)), 300, 100, nil},
		{"ok/png opaque", encodePNG(t, gradient(120, 40, false)), 120, 40, nil},
		{"ok/png gray", encodePNG(t, gray), 50, 20, nil},
		{"ok/png paletted", encodePNG(t, pal), 30, 30, nil},
		{"ok/jpeg", encodeJPEG(t, gradient(200, 100, false)), 200, 100, nil},
		{"ok/jpeg gray", encodeJPEG(t, gray), 50, 20, nil},
		{"ok/largest", encodePNG(t, image.NewGray(image.Rect(0, 0, pdf.MaxLogoSide, 1))), pdf.MaxLogoSide, 1, nil},
		{"error/too wide", encodePNG(t, image.NewGray(image.Rect(0, 0, pdf.MaxLogoSide+1, 1))), 0, 0, pdf.ErrLogoSize},
		{"error/a bomb's header is enough", bomb, 0, 0, pdf.ErrLogoSize},
		{"error/too many bytes", append(encodePNG(t, gray), make([]byte, pdf.MaxLogoBytes)...), 0, 0, pdf.ErrLogoTooLarge},
		{"error/gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), 0, 0, pdf.ErrLogoFormat},
		{"error/empty", nil, 0, 0, pdf.ErrLogoFormat},
		{"error/svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), 0, 0, pdf.ErrLogoFormat},
		{"error/truncated png", truncate(encodePNG(t, gradient(100, 100, true))), 0, 0, pdf.ErrLogoDamaged},
		{"error/truncated jpeg", truncate(encodeJPEG(t, gradient(100, 100, false))), 0, 0, pdf.ErrLogoDamaged},
		{"error/png header only", pngHeader(t, 10, 10), 0, 0, pdf.ErrLogoDamaged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := pdf.ParseLogo(tt.file)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w, h := l.Size(); w != tt.w || h != tt.h {
				t.Errorf("size %d × %d", w, h)
			}
			c, err := pdf.CachedLogo(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := pdf.CachedLogo(tt.file); again != c {
				t.Error("the cache prepared one logo twice")
			}
		})
	}
}

// FuzzParseLogo: no input makes ParseLogo panic or take more than its
// bounds, and a logo it takes renders.
func FuzzParseLogo(f *testing.F) {
	f.Add(encodePNG(f, gradient(20, 10, true)))
	f.Add(encodeJPEG(f, gradient(20, 10, false)))
	f.Add(pngHeader(f, 20000, 20000))
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte{0xff, 0xd8, 0xff, 0xe0})
	d := viaXML(f, sample.Documents(3, 1)[0])
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := pdf.ParseLogo(b)
		if err != nil {
			return
		}
		if w, h := l.Size(); w < 1 || h < 1 || w > pdf.MaxLogoSide || h > pdf.MaxLogoSide {
			t.Fatalf("took a %d × %d logo", w, h)
		}
		if err := pdf.Render(&bytes.Buffer{}, pdf.Input{Document: d, Logo: l}); err != nil {
			t.Fatal(err)
		}
	})
}

// gradient is a w × h image; with alpha its corners are transparent.
func gradient(w, h int, alpha bool) image.Image {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if alpha && (x < w/4 || x > 3*w/4) {
				a = 0
			}
			m.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), 120, a})
		}
	}
	return m
}

func encodePNG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeader is a PNG's signature and header chunk claiming w × h pixels,
// with no image data: what a decompression bomb shows before its data.
func pngHeader(t testing.TB, w, h int) []byte {
	t.Helper()
	full := encodePNG(t, image.NewGray(image.Rect(0, 0, 1, 1)))
	// Signature (8) + IHDR chunk (4 length, 4 type, 13 data, 4 CRC).
	hdr := append([]byte{}, full[:33]...)
	put32 := func(b []byte, v int) { b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v) }
	put32(hdr[16:20], w)
	put32(hdr[20:24], h)
	crc := crc32.ChecksumIEEE(hdr[12:29])
	put32(hdr[29:33], int(crc))
	return hdr
}

func truncate(b []byte) []byte { return b[:len(b)*2/3] }
