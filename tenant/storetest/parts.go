package storetest

import (
	"context"
	"testing"

	"facturad/tenant"
)

// RunLegacyParts checks a store that keeps documents stored before
// its parts moved to tables of their own (the request, signed XML and
// answer in the documents table's columns): they read back whole, a
// save without parts keeps them, and a part a save carries replaces
// the old one. toLegacy moves the parts of every stored document back
// to where they were kept before.
func RunLegacyParts(t *testing.T, s DocumentStore, toLegacy func(t *testing.T)) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	whole := fullDocument(f.Branch, "con-todo", 1)
	whole.SignedXML, whole.ResponseXML = binaryPayload(12<<10, 3), binaryPayload(4<<10, 4)
	requestOnly := minimalDocument(f.Branch, "solo-solicitud", "01", "00001")
	requestOnly.Request = []byte(`{"id_externo":"solo-solicitud"}`)
	bare := minimalDocument(f.Branch, "sin-partes", "04", "00001")
	var docs []tenant.Document
	for _, d := range []tenant.Document{whole, requestOnly, bare} {
		mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
		docs = append(docs, d)
	}

	toLegacy(t)

	for _, d := range docs {
		got, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
		mustNot(t, "DocumentByExternalID "+d.IDExterno, err)
		same(t, "kept where it was, "+d.IDExterno, d, got)
	}
	// A save without parts keeps the old ones.
	d := docs[0]
	d.SignedXML, d.ResponseXML = nil, nil
	d.Place(tenant.StateAccepted)
	mustNot(t, "SaveDocument", s.SaveDocument(ctx, &d))
	want := d
	want.SignedXML, want.ResponseXML = whole.SignedXML, whole.ResponseXML
	readBoth(t, s, "an old document saved without parts", want)
	// A part a save carries replaces the old one.
	d.ResponseXML = binaryPayload(2<<10, 9)
	mustNot(t, "SaveDocument with an answer", s.SaveDocument(ctx, &d))
	want.ResponseXML, want.UpdatedAt = d.ResponseXML, d.UpdatedAt
	readBoth(t, s, "an old document saved with a new answer", want)
}
