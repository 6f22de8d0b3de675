// Package pdf draws the printed representation of a v4.4 electronic
// document: the PDF that GET /api/documents/{clave}/pdf/v4 serves and the
// e-mail to the buyer attaches, and that GET /api/received/{clave}/pdf/v4
// serves of a supplier's document.
//
// The source is the stored signed XML, read back with hacienda.ParseXML
// ([FromSignedXML]), so that what was signed and sent is what is printed;
// [Render] draws it with its state. The page shows the issuer's logo, the
// document type's Spanish title, the clave, consecutivo, issue date,
// situation and state together beside a QR code of the clave, the issuer
// and the receiver (their places by the official names), the sale's
// conditions, means of payment and currency, every line (CABYS, quantity,
// unit, description, unit price, discount, the tax its total holds, line
// total), the other charges, the tax breakdown, the summary's totals, the
// total in figures, in colones for another currency and in Spanish words
// ([Words]), the references, the free texts and the issuer's notes. Every
// page ends with the authorisation legend ([Leyenda]) and is numbered
// "Página N de M"; a document of a test environment ([Ambiente]) is marked
// as without validity on every page. On letter paper long documents
// continue on further pages that repeat the document's identification and
// the lines' header; the ticket ([FormatoTicket]) is one column 80 mm
// wide, each page as long as its content. The output depends only on the
// input.
//
// The logo ([ParseLogo]) is embedded by the package itself: a JPEG as it
// is (DCTDecode), anything else decoded once with the standard library
// and compressed with Flate, its transparency as a soft mask.
//
// # Libraries
//
// The PDF is written by the package itself, one page at a time: each
// page's content stream is compressed, written out and dropped as soon as
// the page is complete, so a render holds one page whatever the number of
// lines (the page count of "Página N de M" is a form XObject written after
// the last page). The text is set in the standard fonts Helvetica and
// Helvetica-Bold in the Windows-1252 (WinAnsi) encoding, which holds every
// Spanish letter: no font file is embedded in the PDF or kept in the
// repository. Their widths come from codeberg.org/go-pdf/fpdf, the
// maintained continuation of gofpdf, which drew the document before and
// kept every page in memory until the end.
//
// [Limiter] bounds the renders of a process, in all and per company: the
// download routes are refused past it, background work waits for a slot.
//
// QR code: github.com/boombuler/barcode, maintained, with no dependencies;
// the symbol is drawn as vector squares, sharp on any printer.
//
// The comparison, the layout and the choices (rounding of the words,
// unknown codes, missing data, text outside Windows-1252) are in the
// project's docs/design/pdf.md.
package pdf
