package pdf

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf16"

	"codeberg.org/go-pdf/fpdf"
)

// The writer below draws the document's pages and writes each one out as
// soon as it is complete: a page's content stream is compressed, written
// and dropped before the next page begins, so a render holds one page
// whatever the number of lines (a drawing library that keeps every page
// until the end would hold them all). What stays until the end is a few
// bytes per page: the offsets of its two objects for the cross-reference
// table and its number for the page tree.
//
// "Página N de M" needs M before the last page is drawn: each footer
// draws M through a form XObject, a small content stream of its own,
// which the writer writes once the pages are counted.
//
// The text is set in the standard fonts Helvetica and Helvetica-Bold, in
// the Windows-1252 (WinAnsi) encoding, so no font file is embedded; their
// widths come from the fpdf module's tables of the standard fonts.

// ptPerMM is the PDF's unit (1/72 inch) per millimetre.
const ptPerMM = 72 / 25.4

// cellMargin is the space kept at a cell's left and right ends.
const cellMargin = 0.8

// The document's fixed objects; the others (two per page, the page and
// its content stream, and the logo's) are numbered as they are written.
const (
	objCatalog = 1 + iota
	objPages
	objFontRegular
	objFontBold
	objInfo
	objPageCount
	firstFreeObj
)

// paper is the geometry of a layout's pages, in millimetres from the top
// left corner.
type paper struct {
	w, h      float64 // the page; for fit pages h is the most one holds
	marginX   float64
	marginTop float64
	// bottom is where a page's body ends: its footer is below.
	bottom float64
	// fit cuts each page to what is drawn on it: a page is as tall as
	// its content and footer (up to h), as a receipt printer's roll.
	fit bool
}

// contentW is the width between the side margins.
func (p paper) contentW() float64 { return p.w - 2*p.marginX }

// fontWidths are the widths of the 256 Windows-1252 characters of
// Helvetica (0) and Helvetica-Bold (1), in thousandths of the font size.
var fontWidths = sync.OnceValue(func() *[2][256]int {
	out := new([2][256]int)
	f := fpdf.New("P", "pt", "Letter", "")
	for i, style := range []string{"", "B"} {
		f.SetFont(fontFamily, style, 1000)
		for c := 1; c < 256; c++ {
			out[i][c] = f.GetStringSymbolWidth(string([]byte{byte(c)}))
		}
	}
	return out
})

// zlibWriters are compressors reused across renders: a compressor's
// tables take most of a megabyte, which a render per page would allocate
// again.
var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// info is the PDF's document information.
type info struct {
	title, subject, author, creator, producer string
	created                                   time.Time
	lang                                      string
}

// writer is one PDF being written, one page at a time.
type writer struct {
	out     countingWriter
	offsets []int64 // of object i+1; 0 until written
	kids    []int   // the pages' object numbers
	page    []byte  // the current page's content stream
	pageNo  int
	open    bool // a page is being drawn
	footer  func()
	meta    info
	zbuf    bytes.Buffer
	pg      paper
	nextObj int      // the next free object number
	images  []string // the resource entries of the images written

	x, y      float64 // the current position, in mm from the top left
	bold      bool
	size      float64 // the font size in points
	fontSet   bool    // the page's font is the current one
	text      [3]int  // the text colour asked for
	fill      [3]int  // the fill colour asked for
	pageFill  [3]int  // the page's current non-stroking colour
	lineWidth float64
}

// countingWriter writes to w and counts the bytes; it keeps the first
// error and writes nothing after it.
type countingWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (c *countingWriter) str(s string) { _, _ = io.WriteString(c, s) }

// newWriter starts a PDF on w: its header, the fonts and the document
// information are written at once.
func newWriter(w io.Writer, pg paper, meta info) *writer {
	pw := &writer{out: countingWriter{w: bufio.NewWriterSize(w, outBuffer)}, meta: meta, size: 12, lineWidth: -1,
		pg: pg, nextObj: firstFreeObj}
	pw.out.str("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	cat := "<< /Type /Catalog /Pages 2 0 R"
	if meta.lang != "" {
		cat += " /Lang " + literal(meta.lang)
	}
	pw.object(objCatalog, cat+" >>")
	for i, name := range []string{"Helvetica", "Helvetica-Bold"} {
		pw.object(objFontRegular+i, "<< /Type /Font /Subtype /Type1 /BaseFont /"+name+" /Encoding /WinAnsiEncoding >>")
	}
	var b bytes.Buffer
	b.WriteString("<<")
	for _, kv := range [][2]string{
		{"Title", meta.title}, {"Subject", meta.subject}, {"Author", meta.author},
		{"Creator", meta.creator}, {"Producer", meta.producer},
	} {
		if kv[1] != "" {
			b.WriteString(" /" + kv[0] + " " + utf16Text(kv[1]))
		}
	}
	if !meta.created.IsZero() {
		d := literal("D:" + pdfDate(meta.created))
		b.WriteString(" /CreationDate " + d + " /ModDate " + d)
	}
	b.WriteString(" >>")
	pw.object(objInfo, b.String())
	return pw
}

// pdfDate writes t as a PDF date with its offset: 20261121103000-06'00'.
func pdfDate(t time.Time) string {
	s := t.Format("20060102150405")
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	if off == 0 {
		return s + "Z"
	}
	return fmt.Sprintf("%s%s%02d'%02d'", s, sign, off/3600, off%3600/60)
}

// startObject records where object n begins and writes its opening.
func (pw *writer) startObject(n int) {
	for len(pw.offsets) < n {
		pw.offsets = append(pw.offsets, 0)
	}
	pw.offsets[n-1] = pw.out.n
	pw.out.str(strconv.Itoa(n) + " 0 obj\n")
}

// object writes object n whose body is body.
func (pw *writer) object(n int, body string) {
	pw.startObject(n)
	pw.out.str(body + "\nendobj\n")
}

// stream writes object n, a stream of content compressed, with the
// dictionary entries dict.
func (pw *writer) stream(n int, dict string, content []byte) {
	pw.zbuf.Reset()
	z := zlibWriters.Get().(*zlib.Writer)
	z.Reset(&pw.zbuf)
	_, _ = z.Write(content) // a bytes.Buffer does not fail
	_ = z.Close()
	zlibWriters.Put(z)
	pw.startObject(n)
	pw.out.str("<< " + dict + "/Filter /FlateDecode /Length " + strconv.Itoa(pw.zbuf.Len()) + " >>\nstream\n")
	_, _ = pw.out.Write(pw.zbuf.Bytes())
	pw.out.str("\nendstream\nendobj\n")
	if pw.zbuf.Cap() > 1<<20 {
		pw.zbuf = bytes.Buffer{} // do not keep an unusually large page's
	}
}

// addPage closes the page being drawn (its footer, then out) and starts a
// new one at the top margin.
func (pw *writer) addPage() {
	pw.closePage()
	pw.pageNo++
	pw.open = true
	pw.page = pw.page[:0]
	pw.fontSet = false
	pw.pageFill = [3]int{0, 0, 0}
	pw.lineWidth = -1
	pw.x, pw.y = pw.pg.marginX, pw.pg.marginTop
}

// alloc returns the next free object number.
func (pw *writer) alloc() int {
	n := pw.nextObj
	pw.nextObj++
	return n
}

// closePage draws the footer of the open page and writes the page.
func (pw *writer) closePage() {
	if !pw.open {
		return
	}
	if pw.footer != nil {
		pw.footer()
	}
	n, c := pw.alloc(), pw.alloc()
	pw.kids = append(pw.kids, n)
	box := ""
	if pw.pg.fit {
		// The page ends below what was drawn last (the footer), its
		// coordinates those of a page pg.h high.
		used := min(pw.pg.h, pw.y+pw.pg.marginTop)
		box = " /MediaBox [0 " + pw.pt(pw.pg.h-used) + " " + pw.pt(pw.pg.w) + " " + pw.pt(pw.pg.h) + "]"
	}
	pw.object(n, "<< /Type /Page /Parent 2 0 R"+box+" /Contents "+strconv.Itoa(c)+" 0 R >>")
	pw.stream(c, "", pw.page)
	pw.open = false
	if cap(pw.page) > 1<<20 {
		pw.page = nil
	}
}

// close ends the document: the last page, the page tree, the page count
// and the cross-reference table.
func (pw *writer) close() error {
	if pw.pageNo == 0 {
		pw.addPage()
	}
	pw.closePage()
	var b bytes.Buffer
	b.WriteString("<< /Type /Pages /Kids [")
	for i, k := range pw.kids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(k) + " 0 R")
	}
	w, h := pw.pt(pw.pg.w), pw.pt(pw.pg.h)
	b.WriteString("] /Count " + strconv.Itoa(len(pw.kids)) + " /MediaBox [0 0 " + w + " " + h + "]")
	b.WriteString(" /Resources << /ProcSet [/PDF /Text /ImageB /ImageC] /Font << /F1 3 0 R /F2 4 0 R >>")
	b.WriteString(" /ExtGState << /Mk << /ca " + markOpacity + " /CA " + markOpacity + " >> >>")
	b.WriteString(" /XObject << /Nb 6 0 R")
	for _, im := range pw.images {
		b.WriteString(" " + im)
	}
	b.WriteString(" >> >> >>")
	pw.object(objPages, b.String())
	// The page count, in the footer's bold: drawn by each page at the
	// end of its "Página N de ".
	count := "BT /F2 " + pw.num1(footerNumberSize) + " Tf 0 0 Td (" + strconv.Itoa(len(pw.kids)) + ") Tj ET"
	pw.stream(objPageCount, "/Type /XObject /Subtype /Form /BBox [0 -10 100 20] /Resources << /Font << /F2 4 0 R >> >> ", []byte(count))

	xref := pw.out.n
	pw.out.str("xref\n0 " + strconv.Itoa(len(pw.offsets)+1) + "\n0000000000 65535 f \n")
	for _, off := range pw.offsets {
		pw.out.str(fmt.Sprintf("%010d 00000 n \n", off))
	}
	pw.out.str("trailer\n<< /Size " + strconv.Itoa(len(pw.offsets)+1) + " /Root 1 0 R /Info 5 0 R >>\nstartxref\n" +
		strconv.FormatInt(xref, 10) + "\n%%EOF\n")
	if pw.out.err != nil {
		return pw.out.err
	}
	return pw.out.w.Flush()
}

// outBuffer is the size of the writes to the PDF's writer.
const outBuffer = 32 << 10

// footerNumberSize is the font size of "Página N de M" (the footer's).
const footerNumberSize = 7

// pt writes a length in millimetres as points with two decimals.
func (pw *writer) pt(mm float64) string { return pw.num1(mm * ptPerMM) }

// num1 formats v with two decimals.
func (pw *writer) num1(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// appendNum appends v with two decimals and a space to the page.
func (pw *writer) appendNum(v float64) {
	if math.Abs(v) < 0.005 {
		v = 0
	}
	pw.page = strconv.AppendFloat(pw.page, v, 'f', 2, 64)
	pw.page = append(pw.page, ' ')
}

// ops appends operators to the page.
func (pw *writer) ops(s string) { pw.page = append(pw.page, s...) }

// pageNumber is the number of the page being drawn.
func (pw *writer) pageNumber() int { return pw.pageNo }

func (pw *writer) getY() float64         { return pw.y }
func (pw *writer) setY(y float64)        { pw.x, pw.y = pw.pg.marginX, y }
func (pw *writer) setXY(x, y float64)    { pw.x, pw.y = x, y }
func (pw *writer) setTextColor(c [3]int) { pw.text = c }
func (pw *writer) setFillColor(c [3]int) { pw.fill = c }

// setFont selects Helvetica ("") or Helvetica-Bold ("B") at size points.
func (pw *writer) setFont(style string, size float64) {
	bold := style == "B"
	if bold != pw.bold || size != pw.size {
		pw.bold, pw.size, pw.fontSet = bold, size, false
	}
}

// useFont makes the page's font the current one.
func (pw *writer) useFont() {
	if pw.fontSet {
		return
	}
	if pw.bold {
		pw.ops("/F2 ")
	} else {
		pw.ops("/F1 ")
	}
	pw.appendNum(pw.size)
	pw.ops("Tf\n")
	pw.fontSet = true
}

// useNonStroke makes c the page's colour of text and fills.
func (pw *writer) useNonStroke(c [3]int) {
	if c == pw.pageFill {
		return
	}
	pw.appendColor(c)
	pw.ops("rg\n")
	pw.pageFill = c
}

// setDrawColor sets the colour of lines.
func (pw *writer) setDrawColor(c [3]int) {
	pw.appendColor(c)
	pw.ops("RG\n")
}

// appendColor appends the RGB colour c, each part from 0 to 1 with three
// decimals and a space, to the page.
func (pw *writer) appendColor(c [3]int) {
	for _, v := range c {
		pw.page = strconv.AppendFloat(pw.page, float64(v)/255, 'f', 3, 64)
		pw.page = append(pw.page, ' ')
	}
}

// setLineWidth sets the width of lines, in millimetres.
func (pw *writer) setLineWidth(w float64) {
	if w == pw.lineWidth {
		return
	}
	pw.appendNum(w * ptPerMM)
	pw.ops("w\n")
	pw.lineWidth = w
}

// line draws a line from (x1, y1) to (x2, y2).
func (pw *writer) line(x1, y1, x2, y2 float64) {
	pw.appendNum(x1 * ptPerMM)
	pw.appendNum((pw.pg.h - y1) * ptPerMM)
	pw.ops("m ")
	pw.appendNum(x2 * ptPerMM)
	pw.appendNum((pw.pg.h - y2) * ptPerMM)
	pw.ops("l S\n")
}

// fillRect fills a w × h rectangle at (x, y) with the fill colour.
func (pw *writer) fillRect(x, y, w, h float64) {
	pw.useNonStroke(pw.fill)
	pw.appendNum(x * ptPerMM)
	pw.appendNum((pw.pg.h - y) * ptPerMM)
	pw.appendNum(w * ptPerMM)
	pw.appendNum(-h * ptPerMM)
	pw.ops("re f\n")
}

// width is the width of the encoded text s in the current font, in mm.
func (pw *writer) width(s string) float64 {
	return float64(pw.units(s)) * pw.size / ptPerMM / 1000
}

// widths is the table of character widths of the current font.
func (pw *writer) widths() *[256]int { return widthsOf(pw.bold) }

// widthsOf is the table of character widths of the bold or the regular
// font.
func widthsOf(bold bool) *[256]int {
	if bold {
		return &fontWidths()[1]
	}
	return &fontWidths()[0]
}

// units is the width of s in thousandths of the font size.
func (pw *writer) units(s string) int { return unitsOf(pw.widths(), s) }

// unitsOf is the width of the encoded text s in thousandths of the size
// of the font whose widths are cw.
func unitsOf(cw *[256]int, s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n += cw[s[i]]
	}
	return n
}

// cell writes the encoded text s in a w × h cell at the current position,
// aligned "L", "C" or "R" and centred vertically, and moves the position
// to the cell's right; it returns where the text ends.
func (pw *writer) cell(w, h float64, s, align string) float64 {
	x := pw.x
	pw.x += w
	if s == "" {
		return x
	}
	tw := pw.width(s)
	dx := cellMargin
	switch align {
	case "R":
		dx = w - cellMargin - tw
	case "C":
		dx = (w - tw) / 2
	}
	pw.useFont()
	pw.useNonStroke(pw.text)
	pw.ops("BT ")
	pw.appendNum((x + dx) * ptPerMM)
	pw.appendNum(pw.baseline(h))
	pw.ops("Td ")
	pw.appendText(s)
	pw.ops(" Tj ET\n")
	return x + dx + tw
}

// appendText appends the encoded text s to the page as a PDF string.
func (pw *writer) appendText(s string) {
	pw.page = append(pw.page, '(')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '(', ')':
			pw.page = append(pw.page, '\\', c)
		case '\r':
			pw.page = append(pw.page, '\\', 'r')
		default:
			pw.page = append(pw.page, c)
		}
	}
	pw.page = append(pw.page, ')')
}

// markOpacity is the opacity of the test mark drawn over a page.
const markOpacity = "0.16"

// markText writes the encoded text s in bold at size points, its baseline
// starting at (x, y) and turned by angle radians counter-clockwise, in
// colour c at the test mark's opacity: it lies over what is drawn before
// it and leaves it readable. The page's graphics state is left as it was.
func (pw *writer) markText(s string, size, x, y, angle float64, c [3]int) {
	pw.ops("q /Mk gs ")
	pw.appendColor(c)
	pw.ops("rg BT /F2 ")
	pw.appendNum(size)
	pw.ops("Tf ")
	cos, sin := math.Cos(angle), math.Sin(angle)
	for _, v := range []float64{cos, sin, -sin, cos} {
		pw.page = strconv.AppendFloat(pw.page, v, 'f', 4, 64)
		pw.page = append(pw.page, ' ')
	}
	pw.appendNum(x * ptPerMM)
	pw.appendNum((pw.pg.h - y) * ptPerMM)
	pw.ops("Tm ")
	pw.appendText(s)
	pw.ops(" Tj ET Q\n")
}

// textWidth is the width in millimetres of the encoded text s in bold
// (bold) or regular type at size points.
func textWidth(s string, bold bool, size float64) float64 {
	return float64(unitsOf(widthsOf(bold), s)) * size / ptPerMM / 1000
}

// rawStream writes object n, a stream whose content is already encoded
// as the dictionary entries dict say (an image).
func (pw *writer) rawStream(n int, dict string, content []byte) {
	pw.startObject(n)
	pw.out.str("<< " + dict + " /Length " + strconv.Itoa(len(content)) + " >>\nstream\n")
	_, _ = pw.out.Write(content)
	pw.out.str("\nendstream\nendobj\n")
}

// image writes the logo's image objects (once per document) and returns
// the name its pages draw it by.
func (pw *writer) image(l *Logo) string {
	const name = "/Im1"
	if len(pw.images) > 0 {
		return name
	}
	n := pw.alloc()
	smask := ""
	if l.alpha != nil {
		m := pw.alloc()
		pw.rawStream(m, "/Type /XObject /Subtype /Image /Width "+strconv.Itoa(l.w)+" /Height "+strconv.Itoa(l.h)+
			" /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", l.alpha)
		smask = " /SMask " + strconv.Itoa(m) + " 0 R"
	}
	cs := "/DeviceRGB"
	if l.colors == 1 {
		cs = "/DeviceGray"
	}
	pw.rawStream(n, "/Type /XObject /Subtype /Image /Width "+strconv.Itoa(l.w)+" /Height "+strconv.Itoa(l.h)+
		" /ColorSpace "+cs+" /BitsPerComponent 8 /Filter /"+l.filter+smask, l.data)
	pw.images = append(pw.images, name+" "+strconv.Itoa(n)+" 0 R")
	return name
}

// drawImage draws the image name in the w × h box whose top left corner
// is (x, y).
func (pw *writer) drawImage(name string, x, y, w, h float64) {
	pw.ops("q ")
	pw.appendNum(w * ptPerMM)
	pw.ops("0 0 ")
	pw.appendNum(h * ptPerMM)
	pw.appendNum(x * ptPerMM)
	pw.appendNum((pw.pg.h - y - h) * ptPerMM)
	pw.ops("cm " + name + " Do Q\n")
}

// cellWithPageCount writes s as cell does, left-aligned, and the total
// number of pages right after it.
func (pw *writer) cellWithPageCount(w, h float64, s string) {
	end := pw.cell(w, h, s, "L")
	pw.ops("q 1 0 0 1 ")
	pw.appendNum(end * ptPerMM)
	pw.appendNum(pw.baseline(h))
	pw.ops("cm /Nb Do Q\n")
}

// baseline is the height from the page's foot, in points, of the
// baseline of text in the current font centred in a cell h high at the
// current position.
func (pw *writer) baseline(h float64) float64 {
	fontH := pw.size / ptPerMM
	return (pw.pg.h - (pw.y + 0.5*h + 0.3*fontH)) * ptPerMM
}

// splitLines breaks the encoded text s into lines that fit a cell w wide
// in the current font: at the last space that lets a line fit, or inside
// a word longer than the whole width.
func (pw *writer) splitLines(s string, w float64) []string {
	limit := int(math.Ceil((w - 2*cellMargin) * 1000 / pw.size * ptPerMM))
	cw := pw.widths()
	var out []string
	start, width, space := 0, 0, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			space = i
		}
		width += cw[c]
		if width <= limit {
			continue
		}
		switch {
		case space >= start:
			out = append(out, s[start:space])
			start = space + 1
		case i == start: // a character wider than the cell
			out = append(out, s[start:i+1])
			start = i + 1
		default:
			out = append(out, s[start:i])
			start = i
		}
		space = -1
		width = pw.units(s[start : i+1])
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// literal writes s (ASCII) as a PDF string.
func literal(s string) string {
	var b bytes.Buffer
	b.WriteByte('(')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '(' || c == ')' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte(')')
	return b.String()
}

// utf16Text writes s as a PDF text string in UTF-16BE with its byte order
// mark, in hexadecimal: any Unicode text reads back as it is.
func utf16Text(s string) string {
	const hex = "0123456789ABCDEF"
	b := []byte("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, hex[u>>12], hex[u>>8&15], hex[u>>4&15], hex[u&15])
	}
	return string(append(b, '>'))
}
