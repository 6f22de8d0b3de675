package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
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
	const rounds = 2
	const lease = 15 * time.Second
	kills := rounds * len(pipeline.FaultPoints)
	sb := sandbox.NewTestServer(t, sandbox.Options{})
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--hacienda-env", "staging",
		"--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken,
		"--lease", lease.String(), "--submit-timeout", "2s"}

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

	reached := map[string]int{}
	for i := range kills {
		point := pipeline.FaultPoints[i%len(pipeline.FaultPoints)]
		c := startChild(t, []string{pipeline.FaultPointEnv + "=" + point}, args...)
		body := fmt.Appendf(nil, `{"xml":%q,"mensaje":"1","condicionImpuesto":"01","montoTotalImpuestoAcreditar":3250.13,"id_externo":"kill-%02d"}`,
			base64.StdEncoding.EncodeToString(xmls[i]), i)
		go func() {
			req, _ := http.NewRequest("POST", "http://"+c.api+"/api/received/v4", bytes.NewReader(body))
			req.Header.Set("AuthToken", buyer.token)
			req.SetBasicAuth(buyer.user, buyer.pass)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		c.waitFor(t, "fault point "+point+" reached", 30*time.Second)
		c.kill()
		reached[point]++
	}
	t.Logf("killed at %v; the tax authority received %d messages meanwhile", reached, sb.Stats().Submissions-submissions)

	// A last start, and no client action: the background worker finishes
	// and settles what each kill left.
	start := time.Now()
	startChild(t, nil, args...)
	store, err := sqlite.Open(context.Background(), filepath.Join(dir, "facturad.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var msgs []tenant.ReceivedDocument
	for {
		msgs = messagesByID(t, store, kills)
		final := 0
		for _, r := range msgs {
			if r.Estado == tenant.StateAccepted {
				final++
			}
		}
		if final == kills {
			break
		}
		if time.Since(start) > 2*lease+10*time.Second {
			for _, r := range msgs {
				if r.Estado != tenant.StateAccepted {
					t.Errorf("%s: estado %s, consecutivo %q, xml %d bytes, next %v, last error %q",
						r.IDExterno, r.Estado, r.Consecutivo, len(r.SignedXML), r.NextAttemptAt, r.LastError)
				}
			}
			t.Fatalf("%d of %d messages accepted two lease periods after the restart", final, kills)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("every message accepted %v after the restart", time.Since(start).Round(100*time.Millisecond))

	// Numbers: 1..kills of type 05, each once, each with its message.
	seen := map[int64]string{}
	for _, r := range msgs {
		if prev, dup := seen[r.Numero]; dup {
			t.Errorf("number %d held by %s and %s", r.Numero, prev, r.IDExterno)
		}
		seen[r.Numero] = r.IDExterno
		if r.Tipo != "05" || len(r.Consecutivo) != 20 || len(r.SignedXML) == 0 {
			t.Errorf("%s: tipo %s consecutivo %q, %d bytes of XML", r.IDExterno, r.Tipo, r.Consecutivo, len(r.SignedXML))
		}
		if _, ok := sb.Document(r.Clave + "-" + r.Consecutivo); !ok {
			t.Errorf("%s: the tax authority never received message %s-%s", r.IDExterno, r.Clave, r.Consecutivo)
		}
	}
	for n := int64(1); n <= int64(kills); n++ {
		if _, ok := seen[n]; !ok {
			t.Errorf("number %d was handed out to no message", n)
		}
	}
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
