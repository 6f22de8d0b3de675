package storetest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/tenant"
	"facturad/tenant/certopen"
	"facturad/tenant/seal"
)

// IVAStore is what the IVA summary suite needs: the documents and received
// documents it reads, and the tenant.IVAStore under test. Both adapters
// are all of them.
type IVAStore interface {
	ReceivedStore
	tenant.IVAStore
	tenant.IVABatchSaver
}

// RunIVA checks the reads and writes of tenant.IVAStore (A.15) as
// subtests: which of a company's documents and received documents a
// month's read returns (Costa Rica months, the estado, the message,
// the company and its environment), the breakdowns written and written
// back, and a document stored without one, whose figures the summary
// computes from its stored XML and keeps, and the breakdowns reservations
// write (written with the document numbered, never by a reservation
// refused: a conflict, the quota, a refused claim). open must return a fresh,
// empty, migrated store for each call.
func RunIVA(t *testing.T, open func(t *testing.T) IVAStore) {
	contract[IVAStore]{
		{"ok/issued documents of a Costa Rica month, accepted, of the company and environment", testIVAIssuedMonth},
		{"ok/received documents by the message's acceptance, mensaje 1 and 2 only", testIVAReceivedMonth},
		{"ok/a breakdown is written, replaced, known to be there, and read instead of the XML", testIVASave},
		{"error/a breakdown of a missing document", testIVASaveMissing},
		{"ok/breakdowns written in a batch, a missing row skipped", testIVASaveBatch},
		{"ok/without a breakdown the summary reads the stored XML and keeps it; one it cannot read is named", testIVAFromXML},
		{"ok/a reservation writes its breakdown with it, none without", testIVAReserve},
		{"ok/a refused reservation writes no breakdown", testIVAReserveRefused},
	}.run(t, open)
}

// ivaBreakdown is a one-cell breakdown whose base tells documents apart.
func ivaBreakdown(base string) []byte {
	return []byte(`{"v":1,"c":[["01","08","13","` + base + `","0","0","0","0"]]}`)
}

// ivaRead is one source as read, for comparison.
type ivaRead struct {
	Received  bool
	ID        int64
	Tipo      string
	Breakdown string
	HasXML    bool
	HasMsg    bool
}

func readIVA(t *testing.T, s IVAStore, companyID int64, periodo, ambiente string) []ivaRead {
	t.Helper()
	m, err := tenant.ParsePeriodo(periodo)
	mustNot(t, "ParsePeriodo", err)
	var out []ivaRead
	err = s.IVASources(context.Background(), tenant.IVAQuery{CompanyID: companyID, Month: m, Ambiente: ambiente},
		func(src tenant.IVASource) error {
			out = append(out, ivaRead{src.Received, src.ID, src.Tipo, string(src.Breakdown), len(src.XML) > 0, len(src.Message) > 0})
			return nil
		})
	mustNot(t, "IVASources", err)
	slices.SortFunc(out, func(a, b ivaRead) int {
		switch {
		case a.Received != b.Received:
			if a.Received {
				return 1
			}
			return -1
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

func wantIVARead(t *testing.T, what string, got, want []ivaRead) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %+v\n want %+v", what, got, want)
	}
}

// issuedIVA stores an issued document of type tipo in the given phase,
// issued at fecha, with a breakdown whose base is base ("" stores none),
// and returns its id.
func issuedIVA(t *testing.T, s IVAStore, b tenant.Branch, id, tipo string, fecha time.Time, phase tenant.Phase, base string) int64 {
	t.Helper()
	d := minimalDocument(b, id, tipo, "00001")
	d.FechaEmision = fecha
	d.Phase, d.Estado = phase, phase.Estado()
	d.SignedXML = []byte("<firmado " + id + "/>")
	mustNot(t, "ReserveDocument "+id, s.ReserveDocument(context.Background(), &d))
	if base != "" {
		mustNot(t, "SaveIVABreakdown "+id, s.SaveIVABreakdown(context.Background(), false, d.ID, ivaBreakdown(base)))
	}
	return d.ID
}

// crMonthEdges are the first and last microsecond of March 2026 in Costa
// Rica time (UTC−6: 06:00 UTC on the 1st; 05:59:59.999999 UTC on 1 April)
// and the instants just outside it.
var (
	marchStart   = time.Date(2026, 3, 1, 0, 0, 0, 0, hacienda.CostaRica)
	marchLast    = time.Date(2026, 3, 31, 23, 59, 59, 999999000, hacienda.CostaRica)
	februaryLast = marchStart.Add(-time.Microsecond)
	aprilFirst   = marchLast.Add(time.Microsecond)
)

func testIVAIssuedMonth(t *testing.T, s IVAStore) {
	f := newDocFixture(t, s)
	other := newDocFixture(t, s)
	mid := time.Date(2026, 3, 15, 12, 0, 0, 0, hacienda.CostaRica)
	first := issuedIVA(t, s, f.Branch, "primero", "01", marchStart, tenant.PhaseAccepted, "1")
	last := issuedIVA(t, s, f.Branch2, "ultimo", "03", marchLast, tenant.PhaseAccepted, "2")
	nd := issuedIVA(t, s, f.Branch, "nota-debito", "02", mid, tenant.PhaseAccepted, "3")
	rep := issuedIVA(t, s, f.Branch, "recibo", "10", mid, tenant.PhaseAccepted, "4") // the store reads it; the summary drops it
	feb := issuedIVA(t, s, f.Branch, "febrero", "01", februaryLast, tenant.PhaseAccepted, "5")
	apr := issuedIVA(t, s, f.Branch, "abril", "01", aprilFirst, tenant.PhaseAccepted, "6")
	issuedIVA(t, s, f.Branch, "rechazado", "01", mid, tenant.PhaseRejected, "7")
	issuedIVA(t, s, f.Branch, "enviado", "01", mid, tenant.PhaseSubmitted, "8")
	issuedIVA(t, s, f.Branch, "pendiente", "01", mid, tenant.PhaseNumbered, "")
	theirs := issuedIVA(t, s, other.Branch, "ajeno", "01", mid, tenant.PhaseAccepted, "9")
	prod := minimalDocument(f.Branch, "produccion", "01", "00001")
	prod.Ambiente, prod.FechaEmision, prod.Phase, prod.Estado = tenant.AmbienteProduccion, mid, tenant.PhaseAccepted, tenant.StateAccepted
	mustNot(t, "ReserveDocument in produccion", s.ReserveDocument(context.Background(), &prod))
	mustNot(t, "SaveIVABreakdown", s.SaveIVABreakdown(context.Background(), false, prod.ID, ivaBreakdown("10")))

	row := func(id int64, tipo, base string) ivaRead {
		return ivaRead{ID: id, Tipo: tipo, Breakdown: string(ivaBreakdown(base))}
	}
	wantIVARead(t, "March in pruebas", readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbientePruebas),
		[]ivaRead{row(first, "01", "1"), row(last, "03", "2"), row(nd, "02", "3"), row(rep, "10", "4")})
	wantIVARead(t, "February in pruebas", readIVA(t, s, f.Company.ID, "2026-02", tenant.AmbientePruebas), []ivaRead{row(feb, "01", "5")})
	wantIVARead(t, "April in pruebas", readIVA(t, s, f.Company.ID, "2026-04", tenant.AmbientePruebas), []ivaRead{row(apr, "01", "6")})
	wantIVARead(t, "March in produccion", readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbienteProduccion), []ivaRead{row(prod.ID, "01", "10")})
	wantIVARead(t, "the other company's March", readIVA(t, s, other.Company.ID, "2026-03", tenant.AmbientePruebas), []ivaRead{row(theirs, "01", "9")})
	wantIVARead(t, "a month without documents", readIVA(t, s, f.Company.ID, "2026-05", tenant.AmbientePruebas), nil)
}

// receivedIVA stores a received document answered with tipo (05, 06, 07),
// the message's verdict estado judged at checked, with a breakdown whose
// base is base ("" stores none), and returns its id.
func receivedIVA(t *testing.T, s IVAStore, b tenant.Branch, n int, tipo string, estado tenant.State, checked time.Time, base string) int64 {
	t.Helper()
	clave := fmt.Sprintf("506221126003101123456001000010100000%05d1%08d", n, n)
	r := receivedDocument(b, fmt.Sprintf("rec-%d", n), clave, tipo)
	r.Place(estado)
	r.SignedXML = []byte(fmt.Sprintf("<mensaje n=\"%d\"/>", n))
	r.CheckedAt = checked
	// The supplier's document is of February: the month is the message's.
	r.FechaEmision = time.Date(2026, 2, 10, 9, 0, 0, 0, hacienda.CostaRica)
	mustNot(t, "ReserveReceived", s.ReserveReceived(context.Background(), &r))
	if base != "" {
		mustNot(t, "SaveIVABreakdown", s.SaveIVABreakdown(context.Background(), true, r.ID, ivaBreakdown(base)))
	}
	return r.ID
}

func testIVAReceivedMonth(t *testing.T, s IVAStore) {
	f := newDocFixture(t, s)
	other := newDocFixture(t, s)
	mid := time.Date(2026, 3, 20, 8, 0, 0, 0, hacienda.CostaRica)
	acepto := receivedIVA(t, s, f.Branch, 1, "05", tenant.StateAccepted, marchStart, "1")
	parcial := receivedIVA(t, s, f.Branch2, 2, "06", tenant.StateAccepted, marchLast, "2")
	receivedIVA(t, s, f.Branch, 3, "07", tenant.StateAccepted, mid, "3") // rejected by the company: no purchase
	receivedIVA(t, s, f.Branch, 4, "05", tenant.StateRejected, mid, "4") // the tax authority refused the message
	receivedIVA(t, s, f.Branch, 5, "05", tenant.StateSent, mid, "5")
	feb := receivedIVA(t, s, f.Branch, 6, "05", tenant.StateAccepted, februaryLast, "6")
	apr := receivedIVA(t, s, f.Branch, 7, "06", tenant.StateAccepted, aprilFirst, "7")
	theirs := receivedIVA(t, s, other.Branch, 8, "05", tenant.StateAccepted, mid, "8")
	// Issued documents are read beside them.
	issued := issuedIVA(t, s, f.Branch, "venta", "01", mid, tenant.PhaseAccepted, "9")

	row := func(id int64, base string) ivaRead {
		return ivaRead{Received: true, ID: id, Tipo: "01", Breakdown: string(ivaBreakdown(base))}
	}
	wantIVARead(t, "March", readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbientePruebas),
		[]ivaRead{{ID: issued, Tipo: "01", Breakdown: string(ivaBreakdown("9"))}, row(acepto, "1"), row(parcial, "2")})
	wantIVARead(t, "February", readIVA(t, s, f.Company.ID, "2026-02", tenant.AmbientePruebas), []ivaRead{row(feb, "6")})
	wantIVARead(t, "April", readIVA(t, s, f.Company.ID, "2026-04", tenant.AmbientePruebas), []ivaRead{row(apr, "7")})
	wantIVARead(t, "March in produccion", readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbienteProduccion), nil)
	wantIVARead(t, "the other company's March", readIVA(t, s, other.Company.ID, "2026-03", tenant.AmbientePruebas), []ivaRead{row(theirs, "8")})
}

func testIVASave(t *testing.T, s IVAStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	mid := time.Date(2026, 3, 15, 12, 0, 0, 0, hacienda.CostaRica)
	d := issuedIVA(t, s, f.Branch, "sin-desglose", "01", mid, tenant.PhaseAccepted, "")
	r := receivedIVA(t, s, f.Branch, 1, "05", tenant.StateAccepted, mid, "")
	// Without a breakdown: the XML (and the message) instead.
	wantIVARead(t, "without breakdowns", readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbientePruebas), []ivaRead{
		{ID: d, Tipo: "01", HasXML: true}, {Received: true, ID: r, Tipo: "01", HasXML: true, HasMsg: true}})
	has := func(received bool, id int64) bool {
		t.Helper()
		ok, err := s.HasIVABreakdown(ctx, received, id)
		mustNot(t, "HasIVABreakdown", err)
		return ok
	}
	if has(false, d) || has(true, r) || has(false, d+1000) {
		t.Errorf("HasIVABreakdown true before any was written")
	}
	// Written: read instead of the XML; written again: replaced. The ids
	// of the two tables may coincide: each write goes to its own.
	for i, base := range []string{"100.12345", "200"} {
		mustNot(t, "SaveIVABreakdown issued", s.SaveIVABreakdown(ctx, false, d, ivaBreakdown(base)))
		if i == 0 && (!has(false, d) || has(true, r)) {
			t.Errorf("HasIVABreakdown after the issued one's write: issued %v, received %v", has(false, d), has(true, r))
		}
		mustNot(t, "SaveIVABreakdown received", s.SaveIVABreakdown(ctx, true, r, ivaBreakdown(base+"1")))
		if !has(true, r) {
			t.Errorf("HasIVABreakdown false after the received one's write")
		}
		wantIVARead(t, "with breakdowns "+base, readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbientePruebas), []ivaRead{
			{ID: d, Tipo: "01", Breakdown: string(ivaBreakdown(base))},
			{Received: true, ID: r, Tipo: "01", Breakdown: string(ivaBreakdown(base + "1"))}})
	}
}

func testIVASaveMissing(t *testing.T, s IVAStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := issuedIVA(t, s, f.Branch, "uno", "01", marchStart, tenant.PhaseAccepted, "")
	// A received document of that id does not exist, nor a document of
	// the next one.
	wantErr(t, "SaveIVABreakdown of a missing received document", s.SaveIVABreakdown(ctx, true, d, ivaBreakdown("1")), tenant.ErrNotFound)
	wantErr(t, "SaveIVABreakdown of a missing document", s.SaveIVABreakdown(ctx, false, d+1000, ivaBreakdown("1")), tenant.ErrNotFound)
}

func testIVASaveBatch(t *testing.T, s IVAStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	mid := time.Date(2026, 3, 15, 12, 0, 0, 0, hacienda.CostaRica)
	d1 := issuedIVA(t, s, f.Branch, "uno", "01", mid, tenant.PhaseAccepted, "")
	d2 := issuedIVA(t, s, f.Branch, "dos", "01", mid, tenant.PhaseAccepted, "5")
	r := receivedIVA(t, s, f.Branch, 1, "05", tenant.StateAccepted, mid, "")
	mustNot(t, "SaveIVABreakdowns of none", s.SaveIVABreakdowns(ctx, nil))
	mustNot(t, "SaveIVABreakdowns", s.SaveIVABreakdowns(ctx, []tenant.IVABreakdownWrite{
		{ID: d1, Breakdown: ivaBreakdown("1")},
		{ID: d2, Breakdown: ivaBreakdown("2")}, // replaces 5
		{ID: d2 + 1000, Breakdown: ivaBreakdown("3")},
		{Received: true, ID: r, Breakdown: ivaBreakdown("4")},
	}))
	wantIVARead(t, "after the batch", readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbientePruebas), []ivaRead{
		{ID: d1, Tipo: "01", Breakdown: string(ivaBreakdown("1"))},
		{ID: d2, Tipo: "01", Breakdown: string(ivaBreakdown("2"))},
		{Received: true, ID: r, Tipo: "01", Breakdown: string(ivaBreakdown("4"))}})
	if ok, err := s.HasIVABreakdown(ctx, false, d2+1000); err != nil || ok {
		t.Errorf("a missing document has a breakdown after the batch: %v, %v", ok, err)
	}
}

// ivaRequest is an FE to the company with identification buyer, with the
// lines given (ivaLine).
func ivaRequest(buyer string, lines string) []byte {
	return []byte(`{"id_externo":"x","tipo_documento":"01","condicion_venta":"01",
	  "receptor":{"nombre":"Compradora S.A.","identificacion":{"tipo":"02","numero":"` + buyer + `"},"correoElectronico":"compras@example.com"},
	  "detalleServicio":[` + lines + `],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`)
}

// ivaLine is line n: cantidad × precio, IVA at the rate code given.
func ivaLine(n int, cantidad, precio, rate string) string {
	return fmt.Sprintf(`{"numeroLinea":%d,"codigoCABYS":"8314100000000","cantidad":%s,"unidadMedida":"Sp","detalle":"Servicio %d",
	  "precioUnitario":%s,"impuesto":[{"codigo":"01","codigoTarifaIVA":"%s"}]}`, n, cantidad, n, precio, rate)
}

// ivaXML calculates the request and writes it as a complete, unsigned
// v4.4 document (what ParseXML reads, a signature or not).
func ivaXML(t *testing.T, body []byte, fecha time.Time, n int) (*hacienda.Document, []byte) {
	t.Helper()
	req, err := hacienda.DecodeSendRequest(body)
	mustNot(t, "DecodeSendRequest", err)
	doc, err := hacienda.NewDocument(req, sample.Issuer())
	mustNot(t, "NewDocument", err)
	doc.FechaEmision = fecha
	doc.NumeroConsecutivo = fmt.Sprintf("0010000101%010d", n)
	doc.Clave = "506" + fecha.Format("020106") + fmt.Sprintf("%012s", doc.Issuer().Numero) + doc.NumeroConsecutivo + "1" + fmt.Sprintf("%08d", n)
	x, err := hacienda.MarshalXML(doc)
	mustNot(t, "MarshalXML", err)
	return doc, x
}

// ivaService is a tenant.Service over s, for the summary itself.
func ivaService(t *testing.T, s tenant.Store) *tenant.Service {
	t.Helper()
	key := make([]byte, seal.KeySize)
	rand.Read(key)
	sealer, err := seal.New(key)
	mustNot(t, "seal.New", err)
	svc, err := tenant.NewService(tenant.ServiceOptions{Store: s, Sealer: sealer, Certificates: certopen.Opener{}})
	mustNot(t, "NewService", err)
	return svc
}

func testIVAFromXML(t *testing.T, s IVAStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	fecha := time.Date(2026, 3, 10, 10, 0, 0, 0, hacienda.CostaRica)

	// An FE issued before breakdowns were kept: 13 % on 1,000 = 130;
	// 1 % on 2 × 100.25 = 200.50 → 2.005; exempt 50.
	_, sold := ivaXML(t, ivaRequest("3101999999", ivaLine(1, "1", "1000", "08")+","+ivaLine(2, "2", "100.25", "02")+","+
		ivaLine(3, "1", "50", "10")), fecha, 1)
	d := minimalDocument(f.Branch, "antiguo", "01", "00001")
	d.FechaEmision, d.Phase, d.Estado, d.SignedXML = fecha, tenant.PhaseAccepted, tenant.StateAccepted, sold
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))

	// A supplier's FE received then: 13 % on 3 × 166.67 = 500.01 → 65.0013,
	// answered with mensaje 2 crediting 40.
	supplier, bought := ivaXML(t, ivaRequest(f.Company.NumeroIdentificacion, ivaLine(1, "3", "166.67", "08")), fecha, 2)
	m, err := hacienda.NewMensajeReceptor(supplier, hacienda.ReceptorAnswer{Mensaje: "2", DetalleMensaje: "Solo una parte",
		CondicionImpuesto: "02", MontoTotalImpuestoAcreditar: hacienda.MustAmount("40")})
	mustNot(t, "NewMensajeReceptor", err)
	m.FechaEmisionDoc, m.NumeroConsecutivoReceptor = fecha.Add(time.Hour), "00100001060000000001"
	msg, err := hacienda.MarshalMensajeReceptor(m)
	mustNot(t, "MarshalMensajeReceptor", err)
	r := receivedDocument(f.Branch, "recibido-antiguo", supplier.Clave, "06")
	r.SupplierXML, r.SignedXML, r.CheckedAt = bought, msg, fecha.Add(2*time.Hour)
	r.Place(tenant.StateAccepted)
	mustNot(t, "ReserveReceived", s.ReserveReceived(ctx, &r))

	// A REP whose XML cannot be read: it moves no IVA, so it is not read.
	rep := minimalDocument(f.Branch, "recibo-ilegible", "10", "00001")
	rep.FechaEmision, rep.Phase, rep.Estado, rep.SignedXML = fecha, tenant.PhaseAccepted, tenant.StateAccepted, []byte("<no/>")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &rep))
	// And, in April, an FE whose XML cannot be read (or was dropped to the
	// archive without a breakdown): April is refused, naming it.
	bad := minimalDocument(f.Branch, "ilegible", "01", "00001")
	bad.Clave, bad.Numero = "50610042600310112345600100001010000000099100000099", 99
	bad.FechaEmision, bad.Phase, bad.Estado, bad.SignedXML = fecha.AddDate(0, 1, 0), tenant.PhaseAccepted, tenant.StateAccepted, []byte("<no/>")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &bad))
	sold2 := minimalDocument(f.Branch, "abril", "01", "00001")
	sold2.FechaEmision, sold2.Phase, sold2.Estado = bad.FechaEmision, tenant.PhaseAccepted, tenant.StateAccepted
	_, sold2.SignedXML = ivaXML(t, ivaRequest("3101999999", ivaLine(1, "1", "10", "08")), bad.FechaEmision, 3)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &sold2))

	svc := ivaService(t, s)
	admin := tenant.Principal{UserID: 1, Username: "admin", Role: tenant.RoleAdmin}
	for _, pass := range []string{"from the XML", "from the breakdowns kept"} {
		sum, err := svc.IVASummary(ctx, admin, f.Company.ID, "2026-03")
		mustNot(t, "IVASummary "+pass, err)
		// Sales: 1 % base 200.50, tax 2.005 → 2.01; 13 % base 1,000, tax
		// 130; exempt 50. Purchases: 13 % base 500.01, tax 65.0013 →
		// 65.00, credit 40. Totals: sales tax 132.005 → 132.01.
		want := tenant.IVASummary{Periodo: "2026-03",
			Ventas: []tenant.IVARow{
				ivaWantRow("01", "02", "1", "200.50", "2.01", "0", "", 1),
				ivaWantRow("01", "08", "13", "1000", "130", "0", "", 1),
				ivaWantRow("01", "10", "0", "0", "0", "50", "", 1),
			},
			Compras:      []tenant.IVARow{ivaWantRow("01", "08", "13", "500.01", "65", "0", "40", 1)},
			TotalVentas:  ivaWantRow("", "", "", "1200.50", "132.01", "50", "", 1),
			TotalCompras: ivaWantRow("", "", "", "500.01", "65", "0", "40", 1),
		}
		wantIVASummary(t, pass, sum, want)
		// The computed breakdowns were kept: the next read has them and
		// no XML; the REP has none (it was not read).
		wantIVARead(t, "after the summary "+pass, ivaNoBreakdownText(readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbientePruebas)), []ivaRead{
			{ID: d.ID, Tipo: "01", Breakdown: "kept"},
			{ID: rep.ID, Tipo: "10", HasXML: true},
			{Received: true, ID: r.ID, Tipo: "01", Breakdown: "kept"}})
	}
	for _, pass := range []string{"first", "again"} {
		_, err := svc.IVASummary(ctx, admin, f.Company.ID, "2026-04")
		var inc *tenant.IVAIncompleteError
		if !errors.As(err, &inc) || inc.Periodo != "2026-04" || inc.Count != 1 || !slices.Equal(inc.Claves, []string{bad.Clave}) {
			t.Fatalf("April %s with an unreadable FE: %v; want an IVAIncompleteError naming %s", pass, err, bad.Clave)
		}
		if !strings.Contains(err.Error(), bad.Clave) {
			t.Errorf("the message does not name the clave: %v", err)
		}
		// The readable one's breakdown was kept all the same.
		wantIVARead(t, "April after the refused summary", ivaNoBreakdownText(readIVA(t, s, f.Company.ID, "2026-04", tenant.AmbientePruebas)), []ivaRead{
			{ID: bad.ID, Tipo: "01", HasXML: true},
			{ID: sold2.ID, Tipo: "01", Breakdown: "kept"}})
	}
}

// ivaNoBreakdownText replaces a stored breakdown by "kept" (its figures
// are checked by the summary).
func ivaNoBreakdownText(rs []ivaRead) []ivaRead {
	for i := range rs {
		if rs[i].Breakdown != "" {
			rs[i].Breakdown = "kept"
		}
	}
	return rs
}

func ivaWantRow(codigo, tarifaCode, tarifa, base, impuesto, exento, acreditable string, docs int64) tenant.IVARow {
	d := func(s string) decimal.Decimal {
		if s == "" {
			return decimal.Zero
		}
		return decimal.RequireFromString(s)
	}
	return tenant.IVARow{Codigo: codigo, CodigoTarifaIVA: tarifaCode, Tarifa: tarifa, Base: d(base), Impuesto: d(impuesto),
		Exento: d(exento), Acreditable: d(acreditable), Documentos: docs}
}

// ivaRowText writes a row with every amount at 2 decimals, for
// comparison.
func ivaRowText(r tenant.IVARow) string {
	return fmt.Sprintf("%s/%s/%s base %s impuesto %s exento %s exonerado %s noSujeto %s acreditable %s documentos %d",
		r.Codigo, r.CodigoTarifaIVA, r.Tarifa, r.Base.StringFixed(2), r.Impuesto.StringFixed(2), r.Exento.StringFixed(2),
		r.Exonerado.StringFixed(2), r.NoSujeto.StringFixed(2), r.Acreditable.StringFixed(2), r.Documentos)
}

func wantIVASummary(t *testing.T, what string, got, want tenant.IVASummary) {
	t.Helper()
	text := func(s tenant.IVASummary) []string {
		out := []string{"periodo " + s.Periodo}
		for _, r := range s.Ventas {
			out = append(out, "ventas "+ivaRowText(r))
		}
		for _, r := range s.Compras {
			out = append(out, "compras "+ivaRowText(r))
		}
		return append(out, "total ventas "+ivaRowText(s.TotalVentas), "total compras "+ivaRowText(s.TotalCompras))
	}
	if g, w := text(got), text(want); !slices.Equal(g, w) {
		t.Errorf("summary %s:\n got  %q\n want %q", what, g, w)
	}
}

// ivaAccepted is a document of March accepted, as a month's read counts
// it, carrying the breakdown of base ("" none).
func ivaAccepted(b tenant.Branch, id, tipo, base string) tenant.Document {
	d := minimalDocument(b, id, tipo, "00001")
	d.FechaEmision = time.Date(2026, 3, 15, 12, 0, 0, 0, hacienda.CostaRica)
	d.Phase, d.Estado = tenant.PhaseAccepted, tenant.StateAccepted
	d.SignedXML = []byte("<firmado " + id + "/>")
	if base != "" {
		d.IVABreakdown = ivaBreakdown(base)
	}
	return d
}

// ivaReceivedAccepted is a received document n whose acceptance (05) was
// recorded in March, carrying the breakdown of base ("" none).
func ivaReceivedAccepted(b tenant.Branch, n int, base string) tenant.ReceivedDocument {
	clave := fmt.Sprintf("506221126003101123456001000010100000%05d1%08d", n, n)
	r := receivedDocument(b, fmt.Sprintf("rec-%d", n), clave, "05")
	r.Place(tenant.StateAccepted)
	r.SignedXML = []byte(fmt.Sprintf("<mensaje n=\"%d\"/>", n))
	r.CheckedAt = time.Date(2026, 3, 20, 8, 0, 0, 0, hacienda.CostaRica)
	if base != "" {
		r.IVABreakdown = ivaBreakdown(base)
	}
	return r
}

func testIVAReserve(t *testing.T, s IVAStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	with := ivaAccepted(f.Branch, "con", "01", "1")
	mustNot(t, "ReserveDocument with a breakdown", s.ReserveDocument(ctx, &with))
	without := ivaAccepted(f.Branch, "sin", "01", "")
	mustNot(t, "ReserveDocument without", s.ReserveDocument(ctx, &without))
	// With a claim (its own transaction in some stores) and with a
	// caller's clave (its own statement).
	sale := ivaAccepted(f.Branch, "credito", "01", "2")
	sale.Claim = &tenant.Claim{Kind: tenant.ClaimBalance, Amount: "100"}
	mustNot(t, "ReserveDocument with a claim", s.ReserveDocument(ctx, &sale))
	own := fullDocument(f.Branch2, "propia", 1)
	own.FechaEmision, own.Phase, own.Estado = sale.FechaEmision, tenant.PhaseAccepted, tenant.StateAccepted
	own.IVABreakdown = ivaBreakdown("3")
	mustNot(t, "ReserveDocument with a caller's clave", s.ReserveDocument(ctx, &own))
	if own.Numero != 1 {
		t.Errorf("the caller's clave was numbered %d, want its own 1", own.Numero)
	}
	rec := ivaReceivedAccepted(f.Branch, 1, "4")
	mustNot(t, "ReserveReceived with a breakdown", s.ReserveReceived(ctx, &rec))
	recWithout := ivaReceivedAccepted(f.Branch, 2, "")
	mustNot(t, "ReserveReceived without", s.ReserveReceived(ctx, &recWithout))

	wantIVARead(t, "March", readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbientePruebas), []ivaRead{
		{ID: with.ID, Tipo: "01", Breakdown: string(ivaBreakdown("1"))},
		{ID: without.ID, Tipo: "01", HasXML: true},
		{ID: sale.ID, Tipo: "01", Breakdown: string(ivaBreakdown("2"))},
		{ID: own.ID, Tipo: "01", Breakdown: string(ivaBreakdown("3"))},
		{Received: true, ID: rec.ID, Tipo: "01", Breakdown: string(ivaBreakdown("4"))},
		{Received: true, ID: recWithout.ID, Tipo: "01", HasXML: true, HasMsg: true},
	})
	// The summary's write-back replaces a reservation's.
	mustNot(t, "SaveIVABreakdown", s.SaveIVABreakdown(ctx, false, with.ID, ivaBreakdown("5")))
	if got := readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbientePruebas)[0]; got.ID != with.ID || got.Breakdown != string(ivaBreakdown("5")) {
		t.Errorf("after SaveIVABreakdown: %+v", got)
	}
}

func testIVAReserveRefused(t *testing.T, s IVAStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	first := ivaAccepted(f.Branch, "uno", "01", "1")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &first))

	// A conflict: the id_externo taken, a caller's clave taken.
	dup := ivaAccepted(f.Branch, "uno", "01", "91")
	wantErr(t, "a taken id_externo", s.ReserveDocument(ctx, &dup), tenant.ErrConflict)
	own := fullDocument(f.Branch, "propia", 1)
	own.FechaEmision, own.Phase, own.Estado = first.FechaEmision, tenant.PhaseAccepted, tenant.StateAccepted
	own.IVABreakdown = ivaBreakdown("2")
	mustNot(t, "ReserveDocument with a caller's clave", s.ReserveDocument(ctx, &own))
	taken := own
	taken.ID, taken.IDExterno, taken.IVABreakdown = 0, "propia-otra", ivaBreakdown("92")
	wantErr(t, "a taken clave", s.ReserveDocument(ctx, &taken), tenant.ErrConflict)

	// A refused claim: a payment over the sale's balance.
	sale := ivaAccepted(f.Branch, "venta", "01", "3")
	sale.Claim = &tenant.Claim{Kind: tenant.ClaimBalance, Amount: "10"}
	mustNot(t, "ReserveDocument of the sale", s.ReserveDocument(ctx, &sale))
	pay := ivaAccepted(f.Branch, "pago", "10", "93")
	pay.Claim = &tenant.Claim{Kind: tenant.ClaimPayment, RefID: sale.ID, Amount: "20", Check: payCheck("10", "20")}
	if err := s.ReserveDocument(ctx, &pay); !errors.Is(err, errOverpaid) {
		t.Errorf("a payment over the balance: %v, want the check's error", err)
	}
	// A claim on a missing document.
	lost := ivaAccepted(f.Branch, "perdida", "03", "94")
	lost.Claim = &tenant.Claim{Kind: tenant.ClaimCredit, RefID: sale.ID + 1000, Amount: "1"}
	wantErr(t, "a claim on a missing document", s.ReserveDocument(ctx, &lost), tenant.ErrNotFound)

	// The quota: another company allowed one document a month.
	g := newDocFixture(t, s)
	g.Company.CuotaMensual = quotaOf(1)
	mustNot(t, "UpdateCompany", s.UpdateCompany(ctx, &g.Company, false))
	counted := ivaAccepted(g.Branch, "contado", "01", "4")
	mustNot(t, "ReserveDocument within the quota", s.ReserveDocument(ctx, &counted))
	over := ivaAccepted(g.Branch, "excedido", "01", "95")
	wantErr(t, "a reservation over the quota", s.ReserveDocument(ctx, &over), tenant.ErrQuota)

	// A received document answered twice.
	rec := ivaReceivedAccepted(f.Branch, 1, "5")
	mustNot(t, "ReserveReceived", s.ReserveReceived(ctx, &rec))
	again := ivaReceivedAccepted(f.Branch, 1, "96")
	again.IDExterno = "rec-otra"
	wantErr(t, "a second answer", s.ReserveReceived(ctx, &again), tenant.ErrConflict)

	// The refused breakdowns are nowhere: not under the documents numbered
	// before, nor under those numbered after (which a refused row's id may
	// be given to).
	next := ivaAccepted(f.Branch, "despues", "01", "")
	mustNot(t, "ReserveDocument after the refusals", s.ReserveDocument(ctx, &next))
	recNext := ivaReceivedAccepted(f.Branch, 2, "")
	mustNot(t, "ReserveReceived after the refusals", s.ReserveReceived(ctx, &recNext))
	wantIVARead(t, "March", readIVA(t, s, f.Company.ID, "2026-03", tenant.AmbientePruebas), []ivaRead{
		{ID: first.ID, Tipo: "01", Breakdown: string(ivaBreakdown("1"))},
		{ID: own.ID, Tipo: "01", Breakdown: string(ivaBreakdown("2"))},
		{ID: sale.ID, Tipo: "01", Breakdown: string(ivaBreakdown("3"))},
		{ID: next.ID, Tipo: "01", HasXML: true},
		{Received: true, ID: rec.ID, Tipo: "01", Breakdown: string(ivaBreakdown("5"))},
		{Received: true, ID: recNext.ID, Tipo: "01", HasXML: true, HasMsg: true},
	})
	g.Company.CuotaMensual = nil
	mustNot(t, "UpdateCompany", s.UpdateCompany(ctx, &g.Company, false))
	after := ivaAccepted(g.Branch, "sin-cuota", "01", "")
	mustNot(t, "ReserveDocument without a quota", s.ReserveDocument(ctx, &after))
	wantIVARead(t, "the other company's March", readIVA(t, s, g.Company.ID, "2026-03", tenant.AmbientePruebas), []ivaRead{
		{ID: counted.ID, Tipo: "01", Breakdown: string(ivaBreakdown("4"))},
		{ID: after.ID, Tipo: "01", HasXML: true},
	})
}
