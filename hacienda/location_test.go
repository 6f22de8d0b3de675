package hacienda

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// officialLocations is the tax authority's location catalogue, copied
// unchanged (testdata/ubicacion/README.md).
var officialLocations = filepath.Join("testdata", "ubicacion", "Codificacionubicacion_V4.4.xlsx")

// TestUbicacionFromOfficialFile derives the location table from the
// official spreadsheet and compares it with the embedded ubicacion.csv;
// with -update it writes the file instead.
func TestUbicacionFromOfficialFile(t *testing.T) {
	rows, err := readSheet(officialLocations)
	if err != nil {
		t.Fatal(err)
	}
	got := deriveLocations(t, rows)
	if *update {
		if err := os.WriteFile("ubicacion.csv", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, []byte(ubicacionCSV)) {
		t.Fatalf("ubicacion.csv is not what %s gives; run go test ./hacienda -run UbicacionFromOfficialFile -update", officialLocations)
	}
}

// TestLocationNames checks the names against the official spellings of a
// few districts, the padding of one-digit codes and unknown codes.
func TestLocationNames(t *testing.T) {
	tests := []struct {
		name          string
		p, c, d       string
		prov, ca, dis string
	}{
		{"ok/first district", "1", "01", "01", "San José", "San José", "Carmen"},
		{"ok/one-digit codes", "1", "1", "1", "San José", "San José", "Carmen"},
		{"ok/accents", "2", "02", "13", "Alajuela", "San Ramón", "Peñas Blancas"},
		{"ok/names only in capitals", "6", "01", "10", "Puntarenas", "Puntarenas", "Isla del Coco"},
		{"ok/Limón", "7", "01", "01", "Limón", "Limón", "Limón"},
		{"unknown/district", "1", "01", "99", "San José", "San José", ""},
		{"unknown/canton", "1", "99", "01", "San José", "", ""},
		{"unknown/province", "8", "01", "01", "", "", ""},
		{"unknown/empty", "", "", "", "", "", ""},
		{"unknown/two-digit province", "10", "1", "01", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, c, d := LocationNames(tt.p, tt.c, tt.d)
			if p != tt.prov || c != tt.ca || d != tt.dis {
				t.Errorf("LocationNames(%q, %q, %q) = %q, %q, %q; want %q, %q, %q", tt.p, tt.c, tt.d, p, c, d, tt.prov, tt.ca, tt.dis)
			}
		})
	}
	if n := len(catalogue.distritos); n != 492 {
		t.Errorf("%d districts, want the catalogue's 492", n)
	}
	if got := provincias.sorted(); !slices.Equal(got, []string{"1", "2", "3", "4", "5", "6", "7"}) {
		t.Errorf("provinces %v", got)
	}
}

// sheetRow is one row of the spreadsheet: its cells by column letter.
type sheetRow map[string]string

// readSheet reads the first worksheet of an .xlsx file with the standard
// library: the shared strings, then every row's cells (a cell of type "s"
// is an index into the shared strings).
func readSheet(path string) ([]sheetRow, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	read := func(name string) ([]byte, error) {
		f, err := zr.Open(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer f.Close()
		return io.ReadAll(f)
	}
	ss, err := read("xl/sharedStrings.xml")
	if err != nil {
		return nil, err
	}
	var sst struct {
		SI []struct {
			T string `xml:"t"`
			R []struct {
				T string `xml:"t"`
			} `xml:"r"`
		} `xml:"si"`
	}
	if err := xml.Unmarshal(ss, &sst); err != nil {
		return nil, fmt.Errorf("%s: shared strings: %w", path, err)
	}
	strs := make([]string, len(sst.SI))
	for i, si := range sst.SI {
		strs[i] = si.T
		for _, r := range si.R {
			strs[i] += r.T
		}
	}
	sheet, err := read("xl/worksheets/sheet1.xml")
	if err != nil {
		return nil, err
	}
	var ws struct {
		Rows []struct {
			C []struct {
				R string `xml:"r,attr"`
				T string `xml:"t,attr"`
				V string `xml:"v"`
			} `xml:"c"`
		} `xml:"sheetData>row"`
	}
	if err := xml.Unmarshal(sheet, &ws); err != nil {
		return nil, fmt.Errorf("%s: worksheet: %w", path, err)
	}
	var rows []sheetRow
	for _, r := range ws.Rows {
		row := sheetRow{}
		for _, c := range r.C {
			if c.V == "" {
				continue
			}
			v := c.V
			if c.T == "s" {
				i, err := strconv.Atoi(v)
				if err != nil || i < 0 || i >= len(strs) {
					return nil, fmt.Errorf("%s: cell %s: shared string %q", path, c.R, v)
				}
				v = strs[i]
			}
			row[strings.TrimRightFunc(c.R, unicode.IsDigit)] = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// deriveLocations makes ubicacion.csv of the spreadsheet's rows (columns
// B–G: province code and name, cantón code and name, district code and
// name; the first row is the header), as testdata/ubicacion/README.md
// says: each name the spelling most of its rows give, blanks trimmed, or
// its capitals in title case when no row writes it otherwise.
func deriveLocations(t *testing.T, rows []sheetRow) []byte {
	t.Helper()
	type spellings struct {
		count map[string]int
		order []string
	}
	names := map[string]*spellings{}
	add := func(key, name string) {
		name = strings.Join(strings.Fields(name), " ")
		if name == "" {
			return
		}
		s := names[key]
		if s == nil {
			s = &spellings{count: map[string]int{}}
			names[key] = s
		}
		if s.count[name] == 0 {
			s.order = append(s.order, name)
		}
		s.count[name]++
	}
	var districts []string
	code := func(row sheetRow, col string, width int) string {
		v := row[col]
		if n, err := strconv.Atoi(v); err != nil || n < 1 || len(v) > width {
			t.Fatalf("row %v: column %s is not a code", row, col)
		}
		return strings.Repeat("0", width-len(v)) + v
	}
	for i, row := range rows {
		if i == 0 {
			if row["B"] != "Provincia" || row["D"] != "Cantón" || row["F"] != "Distrito" {
				t.Fatalf("%s: unexpected header %v", officialLocations, row)
			}
			continue
		}
		p, c, d := code(row, "B", 1), code(row, "D", 2), code(row, "F", 2)
		if names[p+c+d] == nil {
			districts = append(districts, p+c+d)
		}
		add(p+c+d, row["G"])
		add(p+c, row["E"])
		add(p, row["C"])
	}
	name := func(key string) string {
		s := names[key]
		if s == nil {
			t.Fatalf("no name for %s", key)
		}
		best := ""
		for _, n := range s.order {
			if isCapitals(n) {
				continue
			}
			if best == "" || s.count[n] > s.count[best] {
				best = n
			}
		}
		if best == "" {
			best = titleCase(s.order[0])
		}
		return best
	}
	slices.Sort(districts)
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(ubicacionHeader)
	for _, k := range districts {
		_ = w.Write([]string{k[:1], k[1:3], k[3:], name(k[:1]), name(k[:3]), name(k)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// isCapitals reports whether s has letters and no lower-case one.
func isCapitals(s string) bool {
	return strings.ToUpper(s) == s && strings.ToLower(s) != s
}

// titleCase writes a name given in capitals as a Spanish place name: each
// word capitalised, the joining words lower case inside the name.
func titleCase(s string) string {
	small := map[string]bool{"de": true, "del": true, "el": true, "la": true, "las": true, "los": true, "o": true, "y": true, "e": true}
	words := strings.Fields(strings.ToLower(s))
	for i, w := range words {
		if i > 0 && small[w] {
			continue
		}
		r, n := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[n:]
	}
	return strings.Join(words, " ")
}

func TestTitleCase(t *testing.T) {
	for in, want := range map[string]string{
		"ISLA DEL COCO":         "Isla del Coco",
		"SAN JOSÉ O PIZOTE":     "San José o Pizote",
		"ÁNGELES":               "Ángeles",
		"LA GARITA":             "La Garita",
		"  SANTO   DOMINGO  ":   "Santo Domingo",
		"EL ROSARIO DE LA CRUZ": "El Rosario de la Cruz",
	} {
		if got := titleCase(in); got != want {
			t.Errorf("titleCase(%q) = %q, want %q", in, got, want)
		}
	}
}
