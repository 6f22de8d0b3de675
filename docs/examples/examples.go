// Package examples holds the request bodies of docs/examples: one send
// request per document type and common case. The OpenAPI document serves
// them as the send call's examples and the test suite sends every one to a
// running service, so that neither can drift from what the service accepts.
//
// A body that refers to another example's document holds a placeholder
// where that document's data goes: {{clave:NAME}} for its 50-digit clave
// and {{fecha:NAME}} for its issue date, NAME being the other example's
// file name without .json. [Fill] puts the real values in.
package examples

import (
	"embed"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

//go:embed *.json
var files embed.FS

// Example is one request body.
type Example struct {
	// Name is the file name without .json (factura-credito).
	Name string
	// Body is the file's content, placeholders included.
	Body []byte
	// Summary says in a line what the example shows.
	Summary string
	// Needs are the names of the examples whose documents Body refers to.
	Needs []string
}

// summaries are the examples' one-line descriptions; every file has one.
var summaries = map[string]string{
	"factura-contado":                "Factura Electrónica (01): a cash sale by card, a discount, two IVA rates",
	"factura-credito":                "Factura Electrónica (01): a sale on 30 days' credit",
	"factura-credito-iva-90":         "Factura Electrónica (01): a sale on credit with the IVA due within 90 days (condicion_venta 10)",
	"factura-dolares":                "Factura Electrónica (01) in US dollars, with another charge and two means of payment",
	"factura-exoneracion":            "Factura Electrónica (01) with an exonerated line",
	"factura-bonificacion-exonerada": "Factura Electrónica (01): a bonus with the IVA charged to the client (discount code 02) on a wholly exonerated line",
	"factura-bonificacion-selectivo": "Factura Electrónica (01): the same bonus and exoneration on a line that also pays the selectivo de consumo",
	"factura-exportacion":            "Factura Electrónica de Exportación (09) to a foreign buyer",
	"factura-compra":                 "Factura Electrónica de Compra (08): a purchase from a seller who does not invoice; the seller goes in receptor",
	"nota-credito":                   "Nota de Crédito (03) against factura-credito",
	"nota-debito":                    "Nota de Débito (02) against factura-credito",
	"recibo-pago":                    "Recibo Electrónico de Pago (10) for the payment of factura-credito-iva-90",
	"tiquete":                        "Tiquete Electrónico (04) to an unnamed buyer",
}

var placeholder = regexp.MustCompile(`\{\{(clave|fecha):([a-z0-9-]+)\}\}`)

// All returns every example, each after the examples it needs (otherwise
// by name).
func All() ([]Example, error) {
	entries, err := files.ReadDir(".")
	if err != nil {
		return nil, fmt.Errorf("read the examples: %w", err)
	}
	byName := map[string]Example{}
	var names []string
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		if err != nil {
			return nil, fmt.Errorf("read example %s: %w", e.Name(), err)
		}
		ex := Example{Name: strings.TrimSuffix(e.Name(), path.Ext(e.Name())), Body: b}
		if ex.Summary = summaries[ex.Name]; ex.Summary == "" {
			return nil, fmt.Errorf("example %s has no summary", ex.Name)
		}
		for _, m := range placeholder.FindAllSubmatch(b, -1) {
			if n := string(m[2]); !slices.Contains(ex.Needs, n) {
				ex.Needs = append(ex.Needs, n)
			}
		}
		byName[ex.Name] = ex
		names = append(names, ex.Name)
	}
	slices.Sort(names)
	var out []Example
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name, from string) error
	visit = func(name, from string) error {
		ex, ok := byName[name]
		switch {
		case !ok:
			return fmt.Errorf("example %s refers to %s, which does not exist", from, name)
		case state[name] == 1:
			return fmt.Errorf("examples %s and %s refer to each other", from, name)
		case state[name] == 2:
			return nil
		}
		state[name] = 1
		for _, n := range ex.Needs {
			if err := visit(n, name); err != nil {
				return err
			}
		}
		state[name] = 2
		out = append(out, ex)
		return nil
	}
	for _, n := range names {
		if err := visit(n, n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Fill replaces the placeholders of body with the claves of the documents
// the examples it needs became (claves by example name); the issue date is
// read from the clave (its digits 4 to 9 are the day, month and year).
func Fill(body []byte, claves map[string]string) ([]byte, error) {
	var err error
	out := placeholder.ReplaceAllFunc(body, func(m []byte) []byte {
		sub := placeholder.FindSubmatch(m)
		clave, ok := claves[string(sub[2])]
		if !ok || len(clave) != 50 {
			err = fmt.Errorf("no clave for example %s", sub[2])
			return m
		}
		if string(sub[1]) == "clave" {
			return []byte(clave)
		}
		d, mo, y := clave[3:5], clave[5:7], clave[7:9]
		return []byte("20" + y + "-" + mo + "-" + d + "T00:00:00")
	})
	return out, err
}
