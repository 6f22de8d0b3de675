// Package pdf draws the printed representation of a v4.4 electronic
// document: the PDF that GET /api/documents/{clave}/pdf/v4 serves and the
// e-mail to the buyer attaches, and that GET /api/received/{clave}/pdf/v4
// serves of a supplier's document.
//
// The source is the stored signed XML, read back with hacienda.ParseXML
// ([FromSignedXML]), so that what was signed and sent is what is printed;
// [Render] draws it with its state. The page shows the document type's
// Spanish title, the clave, consecutivo, issue date, situation and state
// together beside a QR code of the clave, the issuer and the receiver, the
// sale's conditions, means of payment and currency, every line (CABYS,
// quantity, unit, description, unit price, discount, tax, line total), the
// other charges, the tax breakdown, the summary's totals, the total in
// figures and in Spanish words ([Words]), the references and the free
// texts. Long documents continue on further pages that repeat the
// document's identification and the lines' header, numbered "Página N de
// M". The output depends only on the input.
//
// # Libraries
//
// Drawing: codeberg.org/go-pdf/fpdf, the maintained continuation of
// gofpdf (its GitHub home, go-pdf/fpdf, is archived and points there; the
// original jung-kurt/gofpdf was archived in 2021). Its root package needs
// only the standard library, and it writes the 14 standard PDF fonts in
// the Windows-1252 (WinAnsi) encoding, which holds every Spanish letter:
// no font file is embedded in the PDF or kept in the repository.
// signintech/gopdf cannot use the standard fonts (it always embeds a
// TrueType file); johnfercher/maroto is a grid layer over an unmaintained
// gofpdf fork with many more dependencies, and its grid does not help
// with a table that repeats its header across pages; pdfcpu processes
// PDFs rather than lays them out.
//
// QR code: github.com/boombuler/barcode, maintained, with no dependencies;
// the symbol is drawn as vector squares, sharp on any printer.
//
// The comparison, the layout and the choices (rounding of the words,
// unknown codes, missing data, text outside Windows-1252) are in the
// project's docs/design/pdf.md.
package pdf
