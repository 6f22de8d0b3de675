package storetest

import (
	"context"
	"testing"

	"facturad/tenant"
)

// RunPartsMigration checks the migration that moved a document's large
// parts (its request, signed XML and answer) out of the documents table:
// documents stored before it read back whole after it. s is a migrated
// store; remigrate puts its schema back as it was before that migration
// (the parts in the documents table's columns, the migration not
// recorded), migrates it again and returns a store open on it.
func RunPartsMigration(t *testing.T, s DocumentStore, remigrate func(t *testing.T) DocumentStore) {
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

	s = remigrate(t)

	for _, d := range docs {
		got, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
		mustNot(t, "DocumentByExternalID "+d.IDExterno, err)
		same(t, "after the migration, "+d.IDExterno, d, got)
	}
	// And the parts are where the store now writes them: a save without
	// them keeps them.
	d := docs[0]
	d.SignedXML, d.ResponseXML = nil, nil
	mustNot(t, "SaveDocument", s.SaveDocument(ctx, &d))
	got, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
	mustNot(t, "DocumentByExternalID", err)
	if len(got.SignedXML) != len(whole.SignedXML) || len(got.ResponseXML) != len(whole.ResponseXML) {
		t.Errorf("a save without parts after the migration left %d and %d bytes of XML, want %d and %d",
			len(got.SignedXML), len(got.ResponseXML), len(whole.SignedXML), len(whole.ResponseXML))
	}
}
