package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"facturad/hacienda/sandbox"
	"facturad/pipeline"
	"facturad/signer/certmint"
	"facturad/tenant"
	"facturad/tenant/sqlite"
)

// asServiceEnv makes the test binary run as the facturad command itself,
// so that a test can start the service in a child process and kill it.
const asServiceEnv = "FACTURAD_TEST_RUN_AS_SERVICE"

func TestMain(m *testing.M) {
	if os.Getenv(asServiceEnv) == "1" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	if builtBinDir != "" {
		os.RemoveAll(builtBinDir)
	}
	os.Exit(code)
}

// TestCrashAtEveryStepOfASend kills the service with SIGKILL at each step
// of the send path (numbered, built, signed, stored, submitted), 50 times
// in all, then starts it once more and waits, without any client action:
// every document must reach the tax authority's verdict within two lease
// periods, numbered without gaps or duplicates, and received by the tax
// authority exactly once.
func TestCrashAtEveryStepOfASend(t *testing.T) {
	const kills = 50
	const lease = 15 * time.Second
	sb := sandbox.NewTestServer(t, sandbox.Options{})
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--hacienda-env", "staging",
		"--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken,
		"--lease", lease.String(), "--submit-timeout", "2s"}

	first := startChild(t, nil, args...)
	admin := apiClient{t: t, base: "http://" + first.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101123456")
	first.kill()

	bodies := sendRequests(t, "kill")
	reached := map[string]int{}
	for i := range kills {
		point := pipeline.FaultPoints[i%len(pipeline.FaultPoints)]
		c := startChild(t, []string{pipeline.FaultPointEnv + "=" + point}, args...)
		b := bytes.Replace(bodies[0], []byte(`"kill-0"`), fmt.Appendf(nil, `"kill-%02d"`, i), 1)
		go func() {
			req, _ := http.NewRequest("POST", "http://"+c.api+"/api/documents/v4", bytes.NewReader(b))
			req.Header.Set("AuthToken", branch.token)
			req.SetBasicAuth(branch.user, branch.pass)
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
	t.Logf("killed at %v; the tax authority received %d submissions meanwhile", reached, sb.Stats().Submissions)

	// A last start, and no client action: the background worker finishes
	// what each kill left.
	start := time.Now()
	startChild(t, nil, args...)
	store, err := sqlite.Open(context.Background(), filepath.Join(dir, "facturad.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var docs []tenant.Document
	for {
		docs = docsByID(t, store, kills)
		final := 0
		for _, d := range docs {
			if d.Estado == tenant.StateAccepted {
				final++
			}
		}
		if final == kills {
			break
		}
		if time.Since(start) > 2*lease+10*time.Second {
			for _, d := range docs {
				if d.Estado != tenant.StateAccepted {
					t.Errorf("%s: estado %s, clave %q, xml %d bytes, next %v, last error %q",
						d.IDExterno, d.Estado, d.Clave, len(d.SignedXML), d.NextAttemptAt, d.LastError)
				}
			}
			t.Fatalf("%d of %d documents accepted two lease periods after the restart", final, kills)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("every document accepted %v after the restart", time.Since(start).Round(100*time.Millisecond))

	// Numbers: 1..kills, each once, each with its document.
	seen := map[int64]string{}
	for _, d := range docs {
		if prev, dup := seen[d.Numero]; dup {
			t.Errorf("number %d held by %s and %s", d.Numero, prev, d.IDExterno)
		}
		seen[d.Numero] = d.IDExterno
		if len(d.Clave) != 50 || len(d.SignedXML) == 0 {
			t.Errorf("%s: clave %q, %d bytes of XML", d.IDExterno, d.Clave, len(d.SignedXML))
		}
		if _, ok := sb.Document(d.Clave); !ok {
			t.Errorf("%s: the tax authority never received clave %s", d.IDExterno, d.Clave)
		}
	}
	for n := int64(1); n <= kills; n++ {
		if _, ok := seen[n]; !ok {
			t.Errorf("number %d was handed out to no document", n)
		}
	}
	if st := sb.Stats(); st.Duplicates != 0 || len(sb.Received()) != kills {
		t.Errorf("the tax authority received %d documents and %d duplicate submissions; want %d and 0",
			len(sb.Received()), st.Duplicates, kills)
	}
}

// docsByID reads the documents kill-00 … kill-(n-1) of the only branch.
func docsByID(t *testing.T, s *sqlite.Store, n int) []tenant.Document {
	t.Helper()
	var out []tenant.Document
	for i := range n {
		id := fmt.Sprintf("kill-%02d", i)
		d, err := findDocument(s, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		out = append(out, d)
	}
	return out
}

func findDocument(s *sqlite.Store, id string) (tenant.Document, error) {
	// The first company's first branch; ids are per branch.
	for branch := int64(1); branch <= 3; branch++ {
		d, err := s.DocumentByExternalID(context.Background(), branch, id)
		if err == nil {
			return d, nil
		}
	}
	return tenant.Document{}, fmt.Errorf("no document with id_externo %s", id)
}
