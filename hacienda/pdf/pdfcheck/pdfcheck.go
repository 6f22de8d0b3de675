// Package pdfcheck reads PDFs back with independent tools for the tests:
// poppler's pdftotext and pdfinfo for the text and the pages, pdfimages
// for the images, and pdftoppm with zbar's zbarimg for the QR codes as a
// printer would show them. Any package's tests may use it (the PDF route's, the e-mail's).
//
// A missing tool skips the test, unless TEST_REQUIRE_SERVICES is on (1,
// true or yes; deploy/test.sh sets 1), which makes it a failure: the tools
// are found by xmlcheck.Tool, which reads the switch.
package pdfcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"facturad/hacienda/xmlcheck"
)

// write puts the PDF in a temporary file for the tools.
func write(t testing.TB, pdf []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(f, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	bin := xmlcheck.Tool(t, name)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Text returns the text of every page as pdftotext reads it, in UTF-8,
// in the order it was drawn (-raw: a table cell's lines stay together).
func Text(t testing.TB, pdf []byte) string {
	t.Helper()
	return run(t, "pdftotext", "-raw", "-enc", "UTF-8", write(t, pdf), "-")
}

// Pages returns the text of each page, as Text does.
func Pages(t testing.TB, pdf []byte) []string {
	t.Helper()
	f := write(t, pdf)
	n := PageCount(t, pdf)
	pages := make([]string, n)
	for i := range n {
		p := strconv.Itoa(i + 1)
		pages[i] = run(t, "pdftotext", "-raw", "-enc", "UTF-8", "-f", p, "-l", p, f, "-")
	}
	return pages
}

var pagesRE = regexp.MustCompile(`(?m)^Pages:\s+(\d+)`)

// PageCount returns the number of pages pdfinfo counts; pdfinfo also
// checks that the file's structure is sound.
func PageCount(t testing.TB, pdf []byte) int {
	t.Helper()
	out := run(t, "pdfinfo", write(t, pdf))
	m := pagesRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("pdfinfo gives no page count:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Info returns pdfinfo's fields (Title, Subject, Pages...).
func Info(t testing.TB, pdf []byte) map[string]string {
	t.Helper()
	out := run(t, "pdfinfo", "-enc", "UTF-8", write(t, pdf))
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// QRCodes renders one page (1-based) at 150 dpi, as a modest printer or
// scanner would, and returns the content of every QR code zbarimg finds
// on it.
func QRCodes(t testing.TB, pdf []byte, page int) []string {
	t.Helper()
	dir := t.TempDir()
	p := strconv.Itoa(page)
	run(t, "pdftoppm", "-r", "150", "-gray", "-png", "-f", p, "-l", p, "-singlefile", write(t, pdf), filepath.Join(dir, "page"))
	bin := xmlcheck.Tool(t, "zbarimg")
	out, err := exec.Command(bin, "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", filepath.Join(dir, "page.png")).Output()
	if err != nil {
		// zbarimg exits 4 when it finds no symbol.
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 4 {
			return nil
		}
		t.Fatalf("zbarimg: %v", err)
	}
	var codes []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			codes = append(codes, l)
		}
	}
	return codes
}

var pageSizeRE = regexp.MustCompile(`(?m)^Page\s+(\d+)\s+size:\s+([\d.]+)\s+x\s+([\d.]+)\s+pts`)

// PageSizes returns each page's width and height in points, as pdfinfo
// reads them from the page's media box.
func PageSizes(t testing.TB, pdf []byte) [][2]float64 {
	t.Helper()
	n := PageCount(t, pdf)
	out := run(t, "pdfinfo", "-f", "1", "-l", strconv.Itoa(n), write(t, pdf))
	var sizes [][2]float64
	for _, m := range pageSizeRE.FindAllStringSubmatch(out, -1) {
		w, _ := strconv.ParseFloat(m[2], 64)
		h, _ := strconv.ParseFloat(m[3], 64)
		sizes = append(sizes, [2]float64{w, h})
	}
	if len(sizes) != n {
		t.Fatalf("pdfinfo gives %d page sizes for %d pages:\n%s", len(sizes), n, out)
	}
	return sizes
}

// Image is one image of a PDF as poppler's pdfimages lists it.
type Image struct {
	Page          int
	Type          string // image, smask
	Width, Height int
	Color         string // rgb, gray
	Encoding      string // jpeg, image (Flate)...
}

// Images lists the images every page draws (an image drawn on two pages is
// listed twice), soft masks included.
func Images(t testing.TB, pdf []byte) []Image {
	t.Helper()
	out := run(t, "pdfimages", "-list", write(t, pdf))
	var imgs []Image
	for i, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if i < 2 || len(f) < 10 {
			continue // the two header lines
		}
		page, _ := strconv.Atoi(f[0])
		w, _ := strconv.Atoi(f[3])
		h, _ := strconv.Atoi(f[4])
		imgs = append(imgs, Image{Page: page, Type: f[2], Width: w, Height: h, Color: f[5], Encoding: f[8]})
	}
	return imgs
}
