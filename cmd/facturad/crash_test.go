package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"facturad/gateway"
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
	// Every error answer of the service run in this process is held to
	// the message catalogue (the children's are not seen).
	watch := gateway.WatchCatalogue()
	code := m.Run()
	if problems := watch.Stop(); len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d error answers are not wholly of the message catalogue:\n", len(problems))
		for _, p := range problems {
			fmt.Fprintf(os.Stderr, "  %s\n", p)
		}
		code = 1
	}
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
	notQuick(t, "a crash drill")
	const kills = 50
	const lease = 15 * time.Second
	sb := sandbox.NewTestServer(t, sandbox.Options{})
	dir := t.TempDir()
	args := crashArgs(t, dir, sb, lease)

	first := startChild(t, nil, args...)
	admin := apiClient{t: t, base: "http://" + first.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101123456")
	first.kill()

	bodies := sendRequests(t, "kill")
	reached := killAtFaultPoints(t, args, kills, branch, "/api/documents/v4", func(i int) []byte {
		return bytes.Replace(bodies[0], []byte(`"kill-0"`), fmt.Appendf(nil, `"kill-%02d"`, i), 1)
	})
	t.Logf("killed at %v; the tax authority received %d submissions meanwhile", reached, sb.Stats().Submissions)

	// A last start, and no client action: the background worker finishes
	// what each kill left.
	store, start := restart(t, args, dir)
	docs := waitAccepted(t, "documents", start, lease, func() ([]tenant.Document, []string) {
		docs := docsByID(t, store, kills)
		var waiting []string
		for _, d := range docs {
			if d.Estado != tenant.StateAccepted {
				waiting = append(waiting, fmt.Sprintf("%s: estado %s, clave %q, xml %d bytes, next %v, last error %q",
					d.IDExterno, d.Estado, d.Clave, len(d.SignedXML), d.NextAttemptAt, d.LastError))
			}
		}
		return docs, waiting
	})

	// Numbers: 1..kills, each once, each with its document.
	numbers := map[string]int64{}
	for _, d := range docs {
		numbers[d.IDExterno] = d.Numero
		if len(d.Clave) != 50 || len(d.SignedXML) == 0 {
			t.Errorf("%s: clave %q, %d bytes of XML", d.IDExterno, d.Clave, len(d.SignedXML))
		}
		if _, ok := sb.Document(d.Clave); !ok {
			t.Errorf("%s: the tax authority never received clave %s", d.IDExterno, d.Clave)
		}
	}
	checkNumberedOnce(t, "document", numbers, kills)
	if st := sb.Stats(); st.Duplicates != 0 || len(sb.Received()) != kills {
		t.Errorf("the tax authority received %d documents and %d duplicate submissions; want %d and 0",
			len(sb.Received()), st.Duplicates, kills)
	}
}

// crashArgs are the arguments of a service killed by a crash test: its
// data in dir, sb as the tax authority, the end-to-end tests' admin, and
// a short lease, so that the background worker soon takes over what a
// kill left.
func crashArgs(t *testing.T, dir string, sb *sandbox.TestServer, lease time.Duration) []string {
	return append([]string{"--data-dir", dir, "--hacienda-env", "staging",
		"--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken,
		"--lease", lease.String(), "--submit-timeout", "2s"}, trustSandbox(t, sb)...)
}

// killAtFaultPoints starts the service with args kills times, the i-th
// set to die at pipeline.FaultPoints[i%len]; makes the call body(i) to
// path as c without waiting for its answer, waits until the fault point is
// reached and kills the service with SIGKILL. It returns how often each
// point was reached.
func killAtFaultPoints(t *testing.T, args []string, kills int, c apiClient, path string, body func(i int) []byte) map[string]int {
	t.Helper()
	reached := map[string]int{}
	for i := range kills {
		point := pipeline.FaultPoints[i%len(pipeline.FaultPoints)]
		child := startChild(t, []string{pipeline.FaultPointEnv + "=" + point}, args...)
		b := body(i)
		go func() {
			req, _ := http.NewRequest("POST", "http://"+child.api+path, bytes.NewReader(b))
			req.Header.Set("AuthToken", c.token)
			req.SetBasicAuth(c.user, c.pass)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		child.waitFor(t, "fault point "+point+" reached", 30*time.Second)
		child.kill()
		reached[point]++
	}
	return reached
}

// restart starts the service with args once more and opens its store in
// dir beside it, closed when the test ends; it returns the store and when
// the service was started.
func restart(t *testing.T, args []string, dir string) (*sqlite.Store, time.Time) {
	t.Helper()
	start := time.Now()
	startChild(t, nil, args...)
	store, err := sqlite.Open(context.Background(), filepath.Join(dir, "facturad.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, start
}

// waitAccepted reads the rows with read, which also describes those not
// accepted yet, until every one is accepted, and returns them. Two lease
// periods and 10 seconds after start it fails the test with what waits.
func waitAccepted[T any](t *testing.T, what string, start time.Time, lease time.Duration, read func() (rows []T, waiting []string)) []T {
	t.Helper()
	for {
		rows, waiting := read()
		if len(waiting) == 0 {
			t.Logf("every one of the %s accepted %v after the restart", what, time.Since(start).Round(100*time.Millisecond))
			return rows
		}
		if time.Since(start) > 2*lease+10*time.Second {
			for _, w := range waiting {
				t.Error(w)
			}
			t.Fatalf("%d of %d %s accepted two lease periods after the restart", len(rows)-len(waiting), len(rows), what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkNumberedOnce fails the test unless numbers, by the id_externo holding
// each, are 1..n, each once.
func checkNumberedOnce(t *testing.T, noun string, numbers map[string]int64, n int) {
	t.Helper()
	held := map[int64]string{}
	for _, id := range slices.Sorted(maps.Keys(numbers)) {
		if prev, dup := held[numbers[id]]; dup {
			t.Errorf("number %d held by %s and %s", numbers[id], prev, id)
		}
		held[numbers[id]] = id
	}
	for i := int64(1); i <= int64(n); i++ {
		if _, ok := held[i]; !ok {
			t.Errorf("number %d was handed out to no %s", i, noun)
		}
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
