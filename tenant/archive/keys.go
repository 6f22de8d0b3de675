package archive

import (
	"path"
	"strconv"

	"facturad/hacienda"
	"facturad/tenant"
)

// The parts' object names under a row's key.
const (
	PartSigned   = "firmado.xml"        // an issued document's signed XML
	PartSupplier = "proveedor.xml"      // a received document's XML as uploaded
	PartMessage  = "mensaje.xml"        // our signed MensajeReceptor
	PartResponse = "respuesta.xml"      // the tax authority's answer
	PartPDF      = "representacion.pdf" // the printed representation
)

// Key is the prefix of a row's objects: PREFIX/COMPANY/AMBIENTE/KIND/
// YYYY/MM/DD/CLAVE, the date the document's issue date in Costa Rica
// (its storing date should it have none). It depends only on what never
// changes in a row, so every replica and every retry names the same
// objects.
func Key(prefix string, r tenant.ArchiveRow) string {
	at := r.FechaEmision
	if at.IsZero() {
		at = r.CreatedAt
	}
	at = at.In(hacienda.CostaRica)
	return path.Join(prefix, strconv.FormatInt(r.CompanyID, 10), r.Ambiente, string(r.Kind),
		at.Format("2006"), at.Format("01"), at.Format("02"), r.Clave)
}

// DocumentRow is d as the archive names it.
func DocumentRow(d tenant.Document) tenant.ArchiveRow {
	return tenant.ArchiveRow{Kind: tenant.ArchiveIssued, ID: d.ID, CompanyID: d.CompanyID,
		Ambiente: d.Ambiente, Clave: d.Clave, FechaEmision: d.FechaEmision, CreatedAt: d.CreatedAt}
}

// ReceivedRow is r as the archive names it.
func ReceivedRow(r tenant.ReceivedDocument) tenant.ArchiveRow {
	return tenant.ArchiveRow{Kind: tenant.ArchiveReceived, ID: r.ID, CompanyID: r.CompanyID,
		Ambiente: r.Ambiente, Clave: r.Clave, FechaEmision: r.FechaEmision, CreatedAt: r.CreatedAt}
}
