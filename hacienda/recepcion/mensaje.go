package recepcion

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/beevik/etree"
	"github.com/shopspring/decimal"
)

// Mensaje is a MensajeHacienda: the tax authority's signed verdict on a
// document.
type Mensaje struct {
	Clave                      string
	NombreEmisor               string
	TipoIdentificacionEmisor   string
	NumeroCedulaEmisor         string
	NombreReceptor             string
	TipoIdentificacionReceptor string
	NumeroCedulaReceptor       string
	// Codigo is the Mensaje element: 1 accepted, 3 rejected.
	Codigo int
	// EstadoMensaje is the state in words ("Aceptado", "Rechazado").
	EstadoMensaje string
	// Detalle is DetalleMensaje as sent; DetalleLineas the same split into
	// its non-blank lines, trimmed.
	Detalle       string
	DetalleLineas []string
	// MontoTotalImpuesto is optional in the message.
	MontoTotalImpuesto decimal.NullDecimal
	TotalFactura       decimal.Decimal
	// Signed reports whether the message carries a ds:Signature. The
	// signature is not verified here.
	Signed bool
}

// The Mensaje codes of a MensajeHacienda.
const (
	CodigoAceptado  = 1
	CodigoRechazado = 3
)

// Accepted reports whether the tax authority accepted the document.
func (m *Mensaje) Accepted() bool { return m.Codigo == CodigoAceptado }

// ParseMensaje reads a MensajeHacienda. Elements are matched by local name
// in any namespace: the tax authority has answered with older-version
// namespaces for newer documents.
func ParseMensaje(data []byte) (*Mensaje, error) {
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = false
	if err := doc.ReadFromBytes(data); err != nil {
		return nil, fmt.Errorf("read MensajeHacienda: %w", err)
	}
	root := doc.Root()
	if root == nil || root.Tag != "MensajeHacienda" {
		return nil, errors.New("read MensajeHacienda: the root element is not MensajeHacienda")
	}
	m := &Mensaje{}
	text := map[string]string{}
	for _, el := range root.ChildElements() {
		if el.Tag == "Signature" {
			m.Signed = true
			continue
		}
		text[el.Tag] = el.Text()
	}
	m.Clave = strings.TrimSpace(text["Clave"])
	m.NombreEmisor = text["NombreEmisor"]
	m.TipoIdentificacionEmisor = strings.TrimSpace(text["TipoIdentificacionEmisor"])
	m.NumeroCedulaEmisor = strings.TrimSpace(text["NumeroCedulaEmisor"])
	m.NombreReceptor = text["NombreReceptor"]
	m.TipoIdentificacionReceptor = strings.TrimSpace(text["TipoIdentificacionReceptor"])
	m.NumeroCedulaReceptor = strings.TrimSpace(text["NumeroCedulaReceptor"])
	m.EstadoMensaje = strings.TrimSpace(text["EstadoMensaje"])
	m.Detalle = text["DetalleMensaje"]
	m.DetalleLineas = SplitDetalle(m.Detalle)

	code, ok := text["Mensaje"]
	if !ok {
		return nil, errors.New("read MensajeHacienda: no Mensaje element")
	}
	n, err := strconv.Atoi(strings.TrimSpace(code))
	if err != nil || (n != CodigoAceptado && n != CodigoRechazado) {
		return nil, fmt.Errorf("read MensajeHacienda: Mensaje %q: want 1 or 3", code)
	}
	m.Codigo = n
	if v, ok := text["MontoTotalImpuesto"]; ok {
		d, err := decimal.NewFromString(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("read MensajeHacienda: MontoTotalImpuesto %q: %w", v, err)
		}
		m.MontoTotalImpuesto = decimal.NullDecimal{Decimal: d, Valid: true}
	}
	if v, ok := text["TotalFactura"]; ok {
		d, err := decimal.NewFromString(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("read MensajeHacienda: TotalFactura %q: %w", v, err)
		}
		m.TotalFactura = d
	}
	return m, nil
}

// SplitDetalle splits a DetalleMensaje into its non-blank lines, trimmed.
func SplitDetalle(s string) []string {
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}
