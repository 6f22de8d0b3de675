package hacienda

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"strings"
)

// The location catalogue of nota 14: every district of Costa Rica by its
// codes (provincia, one digit; cantón and distrito, two digits each) with
// the names of the district, its cantón and its province. The table is
// derived from the tax authority's published Codificacionubicacion_V4.4.xlsx
// (kept unchanged in testdata/ubicacion, where its README says how the
// names are taken and how to derive the table again); it is the one list
// of location codes in the code: the validation of addresses and the
// printed document read it.

//go:embed ubicacion.csv
var ubicacionCSV string

// ubicacionHeader is the first line of ubicacion.csv.
var ubicacionHeader = []string{"provincia", "canton", "distrito", "provincia_nombre", "canton_nombre", "distrito_nombre"}

// locations is the catalogue read from ubicacionCSV.
type locations struct {
	provincias codeSet           // "1"
	distritos  codeSet           // "10101"
	names      map[string]string // "1", "101" and "10101" to their names
}

var catalogue = readLocations(ubicacionCSV)

// readLocations reads the embedded table; it panics on a malformed one,
// which the package's tests would have caught.
func readLocations(text string) locations {
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		panic(fmt.Sprintf("hacienda: ubicacion.csv: %v", err))
	}
	if len(rows) < 2 || strings.Join(rows[0], ",") != strings.Join(ubicacionHeader, ",") {
		panic("hacienda: ubicacion.csv: not the location table")
	}
	l := locations{provincias: codeSet{}, distritos: codeSet{}, names: map[string]string{}}
	for i, r := range rows[1:] {
		p, c, d := r[0], r[1], r[2]
		if len(p) != 1 || len(c) != 2 || len(d) != 2 || r[5] == "" {
			panic(fmt.Sprintf("hacienda: ubicacion.csv line %d: %q", i+2, r))
		}
		l.provincias[p] = struct{}{}
		l.distritos[p+c+d] = struct{}{}
		l.names[p], l.names[p+c], l.names[p+c+d] = r[3], r[4], r[5]
	}
	return l
}

// LocationNames returns the official names of a province, a cantón of it
// and a district of that cantón (codes as in the XML: "1", "01", "01"; a
// cantón or district of one digit is read as its two-digit code). A name
// whose code is not in the catalogue is "", and so are the names under
// it: a district is named only within its cantón and province.
func LocationNames(provincia, canton, distrito string) (prov, cant, dist string) {
	canton, distrito = pad2(canton), pad2(distrito)
	prov = catalogue.names[provincia]
	if prov == "" || len(provincia) != 1 {
		return "", "", ""
	}
	if len(canton) != 2 {
		return prov, "", ""
	}
	cant = catalogue.names[provincia+canton]
	if cant == "" || len(distrito) != 2 {
		return prov, cant, ""
	}
	return prov, cant, catalogue.names[provincia+canton+distrito]
}
