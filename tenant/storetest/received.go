package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
)

// ReceivedStore is what the received-documents suite needs: a
// tenant.Store for the companies and branches, the tenant.DocumentStore
// whose sequences number the messages, and the tenant.ReceivedStore under
// test. Both adapters are all three.
type ReceivedStore interface {
	DocumentStore
	tenant.ReceivedStore
}

// RunReceived checks every behaviour of the tenant.ReceivedStore contract
// as subtests. open must return a fresh, empty, migrated store for each
// call and arrange its cleanup with t.Cleanup.
func RunReceived(t *testing.T, open func(t *testing.T) ReceivedStore) {
	contract[ReceivedStore]{
		{"ok/reserve and read back every field", testReceivedRoundTrip},
		{"ok/messages are numbered from the document sequences", testReceivedSequences},
		{"error/one answer per supplier document and company", testReceivedOneAnswer},
		{"error/id externo taken in the branch takes no number", testReceivedExternalID},
		{"ok/save replaces the message and its state", testReceivedSave},
		{"error/save of a stale copy or a missing row", testReceivedSaveStale},
		{"error/another company's received document is not found", testReceivedIsolation},
		{"ok/claim order limit and states", testReceivedClaimOrder},
		{"ok/claim lease", testReceivedClaimLease},
		{"error/claim arguments", testReceivedClaimArgs},
		{"ok/concurrent claims never share a row", func(t *testing.T, s ReceivedStore) { claimReceivedConcurrently(t, []ReceivedStore{s}) }},
	}.run(t, open)
}

const receivedClave = "50622112600310112345600100001010000000042112345678"

// receivedPolicy is a supplier's signature policy as a signer may write it:
// percent-encoded in part and with a raw non-ASCII letter, which the stores
// keep byte for byte.
const receivedPolicy = "https://cdn.comprobanteselectronicos.go.cr/xml-schemas/Resoluci%C3%B3n_General_sobre_disposiciones_técnicas.pdf"

func receivedDocument(b tenant.Branch, idExterno, clave, tipo string) tenant.ReceivedDocument {
	return tenant.ReceivedDocument{
		CompanyID: b.CompanyID, BranchID: b.ID, Ambiente: tenant.AmbientePruebas, IDExterno: idExterno,
		Clave: clave, TipoDocumento: "01",
		EmisorTipo: "02", EmisorNumero: "3101123456", EmisorNombre: "Proveedor & Cía S.A.",
		ReceptorTipo: "02", ReceptorNumero: "3101999999",
		FechaEmision:  time.Date(2026, 11, 22, 9, 15, 30, 123456000, hacienda.CostaRica),
		TotalImpuesto: "438.9255", TotalComprobante: "3815.2755",
		SupplierXML: binaryPayload(4096, 7),
		Mensaje:     map[string]string{"05": "1", "06": "2", "07": "3"}[tipo],
		Tipo:        tipo, Terminal: "00001",
		Submission: tenant.Submission{Phase: tenant.PhaseNumbered, Estado: tenant.StatePending},
	}
}

func testReceivedRoundTrip(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	r := receivedDocument(f.Branch, "rec-1", receivedClave, "06")
	r.RequestHash = []byte("0123456789abcdef0123456789abcdef")
	r.Request = []byte(`{"xml":null,"answer":{"mensaje":"2"},"id_externo":"rec-1"}`)
	r.DetalleMensaje = []string{"línea 1", "línea 2"}
	r.NextAttemptAt = time.Date(2026, 11, 22, 9, 16, 0, 5000, time.UTC)
	r.FirmaPolitica = receivedPolicy
	if err := s.ReserveReceived(ctx, &r); err != nil {
		t.Fatalf("ReserveReceived: %v", err)
	}
	if r.ID == 0 || r.Numero != 1 || r.CreatedAt.IsZero() || !r.CreatedAt.Equal(r.UpdatedAt) {
		t.Fatalf("reserved %+v", r)
	}
	got, err := s.ReceivedByClave(ctx, f.Company.ID, receivedClave)
	if err != nil {
		t.Fatal(err)
	}
	byID, err := s.ReceivedByExternalID(ctx, f.Branch.ID, "rec-1")
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimDueReceived(ctx, r.NextAttemptAt, r.NextAttemptAt.Add(time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 1 {
		t.Fatalf("claimed %d rows, want 1", len(claimed))
	}
	claimed[0].NextAttemptAt = r.NextAttemptAt // the claim moved it to the lease's end
	for what, g := range map[string]tenant.ReceivedDocument{"by clave": got, "by id_externo": byID, "claimed": claimed[0]} {
		if g.ID != r.ID || g.CompanyID != r.CompanyID || g.BranchID != r.BranchID || g.IDExterno != r.IDExterno ||
			!bytes.Equal(g.RequestHash, r.RequestHash) || !bytes.Equal(g.Request, r.Request) || g.Clave != r.Clave || g.TipoDocumento != r.TipoDocumento ||
			g.EmisorTipo != r.EmisorTipo || g.EmisorNumero != r.EmisorNumero || g.EmisorNombre != r.EmisorNombre ||
			g.ReceptorTipo != r.ReceptorTipo || g.ReceptorNumero != r.ReceptorNumero || !g.FechaEmision.Equal(r.FechaEmision) ||
			g.TotalImpuesto != r.TotalImpuesto || g.TotalComprobante != r.TotalComprobante || g.FirmaPolitica != receivedPolicy ||
			!bytes.Equal(g.SupplierXML, r.SupplierXML) || g.Mensaje != "2" || g.Tipo != "06" || g.Terminal != "00001" ||
			g.Numero != 1 || g.Estado != tenant.StatePending || !equalLines(g.DetalleMensaje, r.DetalleMensaje) ||
			!g.NextAttemptAt.Equal(r.NextAttemptAt) || !g.CreatedAt.Equal(r.CreatedAt) || !g.UpdatedAt.Equal(r.UpdatedAt) ||
			g.SignedXML != nil || g.ResponseXML != nil || !g.SubmittedAt.IsZero() || !g.FechaMensaje.IsZero() {
			t.Errorf("%s: read %+v\nwant %+v", what, g, r)
		}
		if g.CreatedAt.Location() != time.UTC || g.FechaEmision.Location() != time.UTC {
			t.Errorf("%s: times not in UTC", what)
		}
	}
}

func testReceivedSequences(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	reserve := func(b tenant.Branch, n int, tipo, terminal string) int64 {
		t.Helper()
		clave := fmt.Sprintf("506221126003101123456001000010100000%05d1%08d", n, n)
		r := receivedDocument(b, fmt.Sprintf("seq-%d", n), clave, tipo)
		r.Terminal = terminal
		if err := s.ReserveReceived(ctx, &r); err != nil {
			t.Fatalf("ReserveReceived %d: %v", n, err)
		}
		return r.Numero
	}
	got := []int64{
		reserve(f.Branch, 1, "05", "00001"), reserve(f.Branch, 2, "05", "00001"), reserve(f.Branch, 3, "07", "00001"),
		reserve(f.Branch, 4, "05", "00002"), reserve(f.Branch2, 5, "05", "00001"), reserve(f.Branch, 6, "05", "00001"),
	}
	want := []int64{1, 2, 1, 1, 1, 3}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("numbers %v, want %v (per branch, terminal and type)", got, want)
	}
	// The sequence is the documents' one: a document of type 05 of the
	// same branch and terminal takes the next number.
	d := minimalDocument(f.Branch, "doc-05", "05", "00001")
	if err := s.ReserveDocument(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if d.Numero != 4 {
		t.Fatalf("document of type 05 numbered %d, want 4 (the sequence the messages use)", d.Numero)
	}
	if n := reserve(f.Branch, 7, "05", "00001"); n != 5 {
		t.Fatalf("next message numbered %d, want 5", n)
	}
}

func testReceivedOneAnswer(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	first := receivedDocument(f.Branch, "a", receivedClave, "05")
	if err := s.ReserveReceived(ctx, &first); err != nil {
		t.Fatal(err)
	}
	for _, b := range []tenant.Branch{f.Branch, f.Branch2} {
		again := receivedDocument(b, "b", receivedClave, "07")
		if err := s.ReserveReceived(ctx, &again); !errors.Is(err, tenant.ErrConflict) {
			t.Fatalf("second answer from branch %s: %v, want ErrConflict", b.Sucursal, err)
		}
	}
	// The refused answers took no number.
	other := receivedDocument(f.Branch, "c", "50622112600310112345600100001010000000043112345678", "07")
	if err := s.ReserveReceived(ctx, &other); err != nil || other.Numero != 1 {
		t.Fatalf("next answer: %v, numero %d, want 1", err, other.Numero)
	}
	// Another company may answer the same document (it is not the one
	// addressed, which the caller checks; the store keeps answers apart).
	g := newDocFixture(t, s)
	theirs := receivedDocument(g.Branch, "a", receivedClave, "05")
	if err := s.ReserveReceived(ctx, &theirs); err != nil {
		t.Fatalf("another company's answer: %v", err)
	}
}

func testReceivedExternalID(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	r := receivedDocument(f.Branch, "same", receivedClave, "05")
	if err := s.ReserveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	dup := receivedDocument(f.Branch, "same", "50622112600310112345600100001010000000043112345678", "05")
	if err := s.ReserveReceived(ctx, &dup); !errors.Is(err, tenant.ErrConflict) {
		t.Fatalf("taken id_externo: %v, want ErrConflict", err)
	}
	next := receivedDocument(f.Branch, "next", "50622112600310112345600100001010000000044112345678", "05")
	if err := s.ReserveReceived(ctx, &next); err != nil || next.Numero != 2 {
		t.Fatalf("next: %v, numero %d, want 2", err, next.Numero)
	}
	// Another branch may use it.
	b2 := receivedDocument(f.Branch2, "same", "50622112600310112345600100001010000000045112345678", "05")
	if err := s.ReserveReceived(ctx, &b2); err != nil {
		t.Fatalf("same id_externo in another branch: %v", err)
	}
	if _, err := s.ReceivedByExternalID(ctx, f.Branch.ID, ""); !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("empty id_externo: %v, want ErrNotFound", err)
	}
}

func testReceivedSave(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	r := receivedDocument(f.Branch, "save", receivedClave, "05")
	r.FirmaPolitica = receivedPolicy
	if err := s.ReserveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	before := r
	r.Consecutivo = "00100001050000000001"
	r.FechaMensaje = time.Date(2026, 11, 22, 10, 0, 0, 250000000, hacienda.CostaRica)
	r.SignedXML = binaryPayload(2048, 9)
	r.IndEstado, r.CodigoMensaje, r.MensajeHacienda = "aceptado", "1", "Aceptado"
	r.Place(tenant.StateAccepted)
	r.DetalleMensaje = []string{"Este comprobante fue aceptado"}
	r.ResponseXML = binaryPayload(1024, 3)
	r.Attempts, r.SubmittedAt, r.CheckedAt = 2, r.FechaMensaje.Add(time.Second), r.FechaMensaje.Add(time.Minute)
	// Fields of the supplier's document are not the save's to change.
	r.TotalComprobante, r.FirmaPolitica = "1", ""
	if err := s.SaveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if !r.UpdatedAt.After(before.UpdatedAt) {
		t.Errorf("UpdatedAt did not move: %v", r.UpdatedAt)
	}
	got, err := s.ReceivedByClave(ctx, f.Company.ID, receivedClave)
	if err != nil {
		t.Fatal(err)
	}
	if got.Consecutivo != r.Consecutivo || !got.FechaMensaje.Equal(r.FechaMensaje) || !bytes.Equal(got.SignedXML, r.SignedXML) ||
		got.Estado != tenant.StateAccepted || got.IndEstado != "aceptado" || got.CodigoMensaje != "1" ||
		got.MensajeHacienda != "Aceptado" || !equalLines(got.DetalleMensaje, r.DetalleMensaje) ||
		!bytes.Equal(got.ResponseXML, r.ResponseXML) || got.Attempts != 2 || !got.SubmittedAt.Equal(r.SubmittedAt) ||
		!got.CheckedAt.Equal(r.CheckedAt) || !got.UpdatedAt.Equal(r.UpdatedAt) {
		t.Errorf("read %+v\nwant %+v", got, r)
	}
	if got.TotalComprobante != before.TotalComprobante || got.Numero != before.Numero || got.Clave != before.Clave ||
		got.FirmaPolitica != before.FirmaPolitica {
		t.Errorf("the save changed the supplier's document: %+v", got)
	}
	if got.Phase != tenant.PhaseAccepted || got.From != tenant.PhaseAccepted {
		t.Errorf("read phase %s (from %s), want accepted", got.Phase, got.From)
	}
	// A verdict is final: no save moves the message out of it, and one
	// from a phase it is not in is refused.
	out := got
	out.Place(tenant.StateSent)
	wantErr(t, "SaveReceived out of a verdict", s.SaveReceived(ctx, &out), tenant.ErrFinal)
	other := got
	other.From, other.LastError = tenant.PhaseSubmitted, "otra fase"
	wantErr(t, "SaveReceived from a phase it is not in", s.SaveReceived(ctx, &other), tenant.ErrConflict)
	if again, err := s.ReceivedByClave(ctx, f.Company.ID, receivedClave); err != nil || again.Phase != tenant.PhaseAccepted || again.LastError != got.LastError {
		t.Errorf("after the refused saves: %+v %v", again, err)
	}
}

func testReceivedSaveStale(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	r := receivedDocument(f.Branch, "stale", receivedClave, "05")
	if err := s.ReserveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	stale := r
	r.Place(tenant.StateSent)
	if err := s.SaveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	stale.Place(tenant.StateNotSentYet)
	if err := s.SaveReceived(ctx, &stale); !errors.Is(err, tenant.ErrConflict) {
		t.Fatalf("stale save: %v, want ErrConflict", err)
	}
	got, _ := s.ReceivedByClave(ctx, f.Company.ID, receivedClave)
	if got.Estado != tenant.StateSent {
		t.Fatalf("stale save applied: estado %s", got.Estado)
	}
	missing := r
	missing.ID = r.ID + 1000
	if err := s.SaveReceived(ctx, &missing); !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("missing row: %v, want ErrNotFound", err)
	}
	bad := r
	bad.Place("09")
	if err := s.SaveReceived(ctx, &bad); err == nil {
		t.Fatal("estado 09 saved")
	}
}

func testReceivedIsolation(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f, g := newDocFixture(t, s), newDocFixture(t, s)
	r := receivedDocument(f.Branch, "iso", receivedClave, "05")
	if err := s.ReserveReceived(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReceivedByClave(ctx, g.Company.ID, receivedClave); !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("another company read it: %v", err)
	}
	if _, err := s.ReceivedByExternalID(ctx, g.Branch.ID, "iso"); !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("another company's branch read it: %v", err)
	}
	// A branch of another company cannot hold a company's answer.
	wrong := receivedDocument(g.Branch, "wrong", "50622112600310112345600100001010000000046112345678", "05")
	wrong.CompanyID = f.Company.ID
	if err := s.ReserveReceived(ctx, &wrong); err == nil {
		t.Fatal("a received document was stored under a branch of another company")
	}
}

// RunReceivedReplicas checks that two stores on one database, as two
// replicas of the service hold them, never claim the same received
// document. open returns both, fresh and migrated, and arranges their
// cleanup.
func RunReceivedReplicas(t *testing.T, open func(t *testing.T) (ReceivedStore, ReceivedStore)) {
	t.Run("ok/replicas never claim the same received document", func(t *testing.T) {
		a, b := open(t)
		claimReceivedConcurrently(t, []ReceivedStore{a, b})
	})
}

// dueReceived is a received document whose message is in state st,
// waiting for an attempt at next; n makes its clave.
func dueReceived(b tenant.Branch, name string, n int, st tenant.State, next time.Time) tenant.ReceivedDocument {
	r := receivedDocument(b, name, fmt.Sprintf("506221126003101123456001000010100%08d112345678", n), "05")
	r.NextAttemptAt = next
	r.Place(st)
	return r
}

// receivedClaims is the claim of s's due received documents.
func receivedClaims(s ReceivedStore) claiming[tenant.ReceivedDocument] {
	return claiming[tenant.ReceivedDocument]{
		name: "ClaimDueReceived", noun: "received document", claim: s.ClaimDueReceived,
		row: func(r tenant.ReceivedDocument) (string, time.Time) { return r.IDExterno, r.NextAttemptAt },
		whole: func(t *testing.T, r tenant.ReceivedDocument) {
			t.Helper()
			if len(r.SupplierXML) == 0 {
				t.Errorf("claimed %s without its supplier's XML", r.IDExterno)
			}
		},
	}
}

func testReceivedClaimOrder(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	rs := make([]tenant.ReceivedDocument, len(claimOrderRows))
	for i, r := range claimOrderRows {
		rs[i] = dueReceived([]tenant.Branch{f.Branch, f.Branch2}[r.branch], r.name, i+1, r.estado, r.next)
		mustNot(t, "ReserveReceived", s.ReserveReceived(ctx, &rs[i]))
	}
	// Issued documents due at the same time are another claim's.
	d := dueDocument(f.Branch, "issued-05", tenant.StateNotSentYet, claimBase.Add(-time.Hour))
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	lease := claimBase.Add(5 * time.Minute)
	c := receivedClaims(s)
	c.checkOrder(t, lease)
	r, err := s.ReceivedByExternalID(ctx, f.Branch.ID, "a-05-3m")
	mustNot(t, "ReceivedByExternalID", err)
	if !r.NextAttemptAt.Equal(lease) {
		t.Errorf("stored NextAttemptAt %v, want the lease end %v", r.NextAttemptAt, lease)
	}
	if !r.UpdatedAt.Equal(rs[3].UpdatedAt) || r.Attempts != 0 || r.Estado != tenant.StateNotSentYet {
		t.Errorf("a claim changed more than NextAttemptAt: %+v", r)
	}
	c.checkNeverClaimed(t)
	if docs, err := s.ClaimDueDocuments(ctx, claimBase, lease, 10); err != nil || len(docs) != 1 || docs[0].ID != d.ID {
		t.Errorf("the issued document's claim: %v %v", docs, err)
	}
}

func testReceivedClaimLease(t *testing.T, s ReceivedStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	now := claimBase
	r := dueReceived(f.Branch, "arrendado", 1, tenant.StateNotSentYet, now.Add(-time.Second))
	mustNot(t, "ReserveReceived", s.ReserveReceived(ctx, &r))
	receivedClaims(s).checkLease(t, now, now.Add(30*time.Second), func(st tenant.State, next time.Time, attempts int) {
		r.NextAttemptAt, r.Attempts = next, attempts
		r.Place(st)
		mustNot(t, "SaveReceived", s.SaveReceived(ctx, &r))
	})
}

func testReceivedClaimArgs(t *testing.T, s ReceivedStore) {
	f := newDocFixture(t, s)
	r := dueReceived(f.Branch, "pendiente", 1, tenant.StateSent, claimBase.Add(-time.Second))
	mustNot(t, "ReserveReceived", s.ReserveReceived(context.Background(), &r))
	receivedClaims(s).checkArgs(t, claimBase)
}

// claimReceivedConcurrently makes due received documents through
// stores[0] and has several goroutines per store claim them in small
// batches at once: every due row must be claimed exactly once.
func claimReceivedConcurrently(t *testing.T, stores []ReceivedStore) {
	t.Helper()
	ctx := context.Background()
	f := newDocFixture(t, stores[0])
	now := claimBase
	due := map[int64]bool{}
	for i := range 120 {
		st := []tenant.State{tenant.StateSent, tenant.StateNotSentYet, tenant.StatePending}[i%3]
		b := []tenant.Branch{f.Branch, f.Branch2}[i%2]
		r := dueReceived(b, fmt.Sprintf("due-%d", i), 3*i, st, now.Add(-time.Duration(i%7)*time.Second))
		mustNot(t, "ReserveReceived", stores[0].ReserveReceived(ctx, &r))
		due[r.ID] = true
		if i%10 == 0 {
			n := dueReceived(b, fmt.Sprintf("not-due-%d", i), 3*i+1, st, now.Add(time.Second))
			mustNot(t, "ReserveReceived", stores[0].ReserveReceived(ctx, &n))
			a := dueReceived(b, fmt.Sprintf("final-%d", i), 3*i+2, tenant.StateAccepted, now.Add(-time.Hour))
			mustNot(t, "ReserveReceived", stores[0].ReserveReceived(ctx, &a))
		}
	}
	var claims []claiming[tenant.ReceivedDocument]
	for _, s := range stores {
		claims = append(claims, receivedClaims(s))
	}
	claimEachOnce(t, claims, due)
}
