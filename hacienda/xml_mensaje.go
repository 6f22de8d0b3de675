package hacienda

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

// NamespaceMensajeHacienda is the target namespace of MensajeHacienda_V4.4.xsd.
const NamespaceMensajeHacienda = namespaceBase + "mensajeHacienda"

// Values of MensajeHacienda's Mensaje element.
const (
	MensajeAceptado  = 1 // the document was accepted
	MensajeRechazado = 3 // the document was rejected
)

// MensajeHacienda is the tax authority's answer to a submitted document: the
// signed XML it returns base64-encoded in respuesta-xml. The tax authority's
// ds:Signature is not kept here; store the raw bytes for that.
type MensajeHacienda struct {
	// Namespace is the namespace the answer was written in. The tax
	// authority has answered newer documents in older-version namespaces,
	// so ParseMensajeHacienda accepts any; MarshalMensajeHacienda writes
	// NamespaceMensajeHacienda when it is empty.
	Namespace                  string
	Clave                      string
	NombreEmisor               string
	TipoIdentificacionEmisor   string
	NumeroCedulaEmisor         string
	NombreReceptor             string
	TipoIdentificacionReceptor string
	NumeroCedulaReceptor       string
	Mensaje                    int    // MensajeAceptado or MensajeRechazado
	EstadoMensaje              string // the state in words: "Aceptado", "Rechazado"
	DetalleMensaje             string // free text; on rejection, the list of errors
	MontoTotalImpuesto         Amount // absent when the answer has none
	TotalFactura               Amount
}

// Accepted reports whether the answer accepts the document.
func (m *MensajeHacienda) Accepted() bool { return m.Mensaje == MensajeAceptado }

// DetalleLines returns the non-blank lines of DetalleMensaje, trimmed.
func (m *MensajeHacienda) DetalleLines() []string {
	var out []string
	for l := range strings.SplitSeq(strings.ReplaceAll(m.DetalleMensaje, "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// ErrNotMensajeHacienda is wrapped by ParseMensajeHacienda when the bytes are
// not a MensajeHacienda at all.
var ErrNotMensajeHacienda = errors.New("not a MensajeHacienda")

// ParseMensajeHacienda reads a MensajeHacienda. Elements are matched by
// local name in any namespace (answers have come in older-version
// namespaces); the root must be MensajeHacienda, Clave must be 50 digits and
// Mensaje 1 or 3. A ds:Signature and unknown elements are ignored.
func ParseMensajeHacienda(b []byte) (*MensajeHacienda, error) {
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = false
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotMensajeHacienda, err)
	}
	return ReadMensajeHacienda(doc.Root())
}

// ReadMensajeHacienda is ParseMensajeHacienda on a document already
// parsed (for instance by the verifier of its signature), given its root
// element; it does not change the element.
func ReadMensajeHacienda(root *etree.Element) (*MensajeHacienda, error) {
	if root == nil || root.Tag != "MensajeHacienda" {
		return nil, fmt.Errorf("%w: root element is not MensajeHacienda", ErrNotMensajeHacienda)
	}
	m := &MensajeHacienda{Namespace: root.NamespaceURI()}
	seen := map[string]bool{}
	for _, el := range root.ChildElements() {
		if seen[el.Tag] && el.Tag != "Signature" {
			return nil, fmt.Errorf("MensajeHacienda: element %s appears twice", el.Tag)
		}
		seen[el.Tag] = true
		v := el.Text()
		var err error
		switch el.Tag {
		case "Clave":
			m.Clave = strings.TrimSpace(v)
		case "NombreEmisor":
			m.NombreEmisor = v
		case "TipoIdentificacionEmisor":
			m.TipoIdentificacionEmisor = strings.TrimSpace(v)
		case "NumeroCedulaEmisor":
			m.NumeroCedulaEmisor = strings.TrimSpace(v)
		case "NombreReceptor":
			m.NombreReceptor = v
		case "TipoIdentificacionReceptor":
			m.TipoIdentificacionReceptor = strings.TrimSpace(v)
		case "NumeroCedulaReceptor":
			m.NumeroCedulaReceptor = strings.TrimSpace(v)
		case "Mensaje":
			m.Mensaje, err = strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("MensajeHacienda: Mensaje %q is not a number", v)
			}
		case "EstadoMensaje":
			m.EstadoMensaje = strings.TrimSpace(v)
		case "DetalleMensaje":
			m.DetalleMensaje = v
		case "MontoTotalImpuesto":
			m.MontoTotalImpuesto, err = ParseAmount(strings.TrimSpace(v))
		case "TotalFactura":
			m.TotalFactura, err = ParseAmount(strings.TrimSpace(v))
		}
		if err != nil {
			return nil, fmt.Errorf("MensajeHacienda: %s: %w", el.Tag, err)
		}
	}
	if !isNDigits(m.Clave, ClaveLen) {
		return nil, fmt.Errorf("MensajeHacienda: Clave %q is not %d digits", m.Clave, ClaveLen)
	}
	if m.Mensaje != MensajeAceptado && m.Mensaje != MensajeRechazado {
		return nil, fmt.Errorf("MensajeHacienda: Mensaje %d is neither 1 (accepted) nor 3 (rejected)", m.Mensaje)
	}
	return m, nil
}

// MarshalMensajeHacienda writes m as an unsigned MensajeHacienda in the
// element order of MensajeHacienda_V4.4.xsd, without insignificant
// whitespace; the caller appends the signature. Optional elements that are
// empty are omitted; DetalleMensaje is always written (the schema requires
// it, possibly empty).
func MarshalMensajeHacienda(m *MensajeHacienda) ([]byte, error) {
	if m == nil {
		return nil, errors.New("marshal MensajeHacienda: nil message")
	}
	if m.Mensaje != MensajeAceptado && m.Mensaje != MensajeRechazado {
		return nil, fmt.Errorf("marshal MensajeHacienda: Mensaje %d is neither 1 nor 3", m.Mensaje)
	}
	ns := m.Namespace
	if ns == "" {
		ns = NamespaceMensajeHacienda
	}
	w := &xmlWriter{buf: make([]byte, 0, 1024+len(m.DetalleMensaje))}
	w.buf = append(w.buf, xmlDeclaration...)
	w.buf = append(w.buf, "<MensajeHacienda"...)
	w.attr("xmlns", ns)
	w.buf = append(w.buf, '>')
	w.str("Clave", m.Clave)
	w.str("NombreEmisor", m.NombreEmisor)
	w.str("TipoIdentificacionEmisor", m.TipoIdentificacionEmisor)
	w.str("NumeroCedulaEmisor", m.NumeroCedulaEmisor)
	w.optStr("NombreReceptor", m.NombreReceptor)
	w.optStr("TipoIdentificacionReceptor", m.TipoIdentificacionReceptor)
	w.optStr("NumeroCedulaReceptor", m.NumeroCedulaReceptor)
	w.start("Mensaje")
	w.buf = strconv.AppendInt(w.buf, int64(m.Mensaje), 10)
	w.end("Mensaje")
	w.str("EstadoMensaje", m.EstadoMensaje)
	w.start("DetalleMensaje")
	w.text("DetalleMensaje", m.DetalleMensaje)
	w.end("DetalleMensaje")
	w.optAmount("MontoTotalImpuesto", m.MontoTotalImpuesto)
	w.amount("TotalFactura", m.TotalFactura)
	w.end("MensajeHacienda")
	if w.err != nil {
		return nil, fmt.Errorf("marshal MensajeHacienda: %w", w.err)
	}
	return w.buf, nil
}
