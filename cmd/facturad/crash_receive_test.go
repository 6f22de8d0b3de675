package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"facturad/hacienda/sandbox"
	"facturad/pipeline"
	"facturad/signer/certmint"
	"facturad/tenant"
	"facturad/tenant/sqlite"
)

// TestCrashAtEveryStepOfAReceive kills the service with SIGKILL at each
// step of a receive call (numbered, built, signed, stored, submitted),
// twice each, then starts it once more and waits, without any client
// action: every message must reach the tax authority's verdict within two
// lease periods, numbered without gaps or duplicates, and be received by
// the tax authority exactly once.
func TestCrashAtEveryStepOfAReceive(t *testing.T) {
	notQuick(t, "a crash drill")
	const rounds = 2
	const lease = 15 * time.Second
	kills := rounds * len(pipeline.FaultPoints)
	sb := sandbox.NewTestServer(t, sandbox.Options{})
	dir := t.TempDir()
	args := crashArgs(t, dir, sb, lease)

	// The supplier issues the documents the buyer answers, with the
	// service running normally.
	const supplierID, buyerID = "3101123456", "3101654321"
	first := startChild(t, nil, args...)
	admin := apiClient{t: t, base: "http://" + first.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	supplier := createCompany(t, admin, ca, supplierID)
	buyer := createCompany(t, admin, ca, buyerID)
	var xmls [][]byte
	for i := range kills {
		xmls = append(xmls, issueTo(t, supplier, buyerID, fmt.Sprintf("fe-kill-%02d", i)))
	}
	first.kill()
	submissions := sb.Stats().Submissions

	reached := killAtFaultPoints(t, args, kills, buyer, "/api/received/v4", func(i int) []byte {
		return fmt.Appendf(nil, `{"xml":%q,"mensaje":"1","condicionImpuesto":"01","montoTotalImpuestoAcreditar":3250.13,"id_externo":"kill-%02d"}`,
			base64.StdEncoding.EncodeToString(xmls[i]), i)
	})
	t.Logf("killed at %v; the tax authority received %d messages meanwhile", reached, sb.Stats().Submissions-submissions)

	// A last start, and no client action: the background worker finishes
	// and settles what each kill left.
	store, start := restart(t, args, dir)
	msgs := waitAccepted(t, "messages", start, lease, func() ([]tenant.ReceivedDocument, []string) {
		msgs := messagesByID(t, store, kills)
		var waiting []string
		for _, r := range msgs {
			if r.Estado != tenant.StateAccepted {
				waiting = append(waiting, fmt.Sprintf("%s: estado %s, consecutivo %q, xml %d bytes, next %v, last error %q",
					r.IDExterno, r.Estado, r.Consecutivo, len(r.SignedXML), r.NextAttemptAt, r.LastError))
			}
		}
		return msgs, waiting
	})

	// Numbers: 1..kills of type 05, each once, each with its message.
	numbers := map[string]int64{}
	for _, r := range msgs {
		numbers[r.IDExterno] = r.Numero
		if r.Tipo != "05" || len(r.Consecutivo) != 20 || len(r.SignedXML) == 0 {
			t.Errorf("%s: tipo %s consecutivo %q, %d bytes of XML", r.IDExterno, r.Tipo, r.Consecutivo, len(r.SignedXML))
		}
		if _, ok := sb.Document(r.Clave + "-" + r.Consecutivo); !ok {
			t.Errorf("%s: the tax authority never received message %s-%s", r.IDExterno, r.Clave, r.Consecutivo)
		}
	}
	checkNumberedOnce(t, "message", numbers, kills)
	if st := sb.Stats(); st.Duplicates != 0 || st.Submissions-submissions != int64(kills) {
		t.Errorf("the tax authority received %d messages and %d duplicate submissions; want %d and 0",
			st.Submissions-submissions, st.Duplicates, kills)
	}
}

// messagesByID reads the received documents kill-00 … kill-(n-1) of the
// buyer's branch (the second company's first branch).
func messagesByID(t *testing.T, s *sqlite.Store, n int) []tenant.ReceivedDocument {
	t.Helper()
	var out []tenant.ReceivedDocument
	for i := range n {
		id := fmt.Sprintf("kill-%02d", i)
		var found bool
		for branch := int64(1); branch <= 3 && !found; branch++ {
			r, err := s.ReceivedByExternalID(context.Background(), branch, id)
			if err == nil {
				out, found = append(out, r), true
			}
		}
		if !found {
			t.Fatalf("no received document with id_externo %s", id)
		}
	}
	return out
}
