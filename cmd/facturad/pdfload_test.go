package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/hacienda/sample"
	"facturad/signer/certmint"
)

// longInvoice is the send request of an FE of n lines (v4.4 allows up
// to 1,000), each a copy of the sample's first line with its own number,
// description, quantity and price.
func longInvoice(t *testing.T, n int) []byte {
	t.Helper()
	req, err := sample.LongFE(4, n)
	if err != nil {
		t.Fatal(err)
	}
	req.IDExterno, req.FechaEmision, req.Clave = "long-1", "", ""
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParallelPDFsOfALongInvoice: the PDF of a 1,000-line invoice asked
// for 48 times at once, three rounds, against the service in a process of
// its own. The renders are bounded (FACTURAD_MAX_RENDERS, and the
// company's bound), so every answer is a PDF or a refusal with
// Retry-After, some are PDFs, and the service's peak resident set stays
// under 400 MB (unbounded, it went from 150 MB to 1.36 GB). With one
// company its bound (2) refuses most at once (429) and the process-wide
// bound (4) is never reached; with three companies, each with its own
// such invoice, the process draws 4 at once and sheds past it (503): at
// least one 503 shows it got there.
func TestParallelPDFsOfALongInvoice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the service binary")
	}
	for _, tc := range []struct {
		name      string
		companies int
		// busy says the process-wide bound must be reached (a 503).
		busy bool
	}{
		{"one company", 1, false},
		{"three companies", 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) { parallelPDFs(t, tc.companies, tc.busy) })
	}
}

// parallelPDFs runs TestParallelPDFsOfALongInvoice with the 48 requests of
// each round spread over companies companies.
func parallelPDFs(t *testing.T, companies int, busy bool) {
	const parallel, rounds, limit = 48, 3, 400 << 20
	c := startBinary(t, nil, "--data-dir", t.TempDir(), "--sandbox-processing-delay", "0",
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	admin := apiClient{t: t, base: "http://" + c.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	type pdfOf struct {
		branch apiClient
		path   string
		size   int
	}
	var docs []pdfOf
	for k := range companies {
		branch := createCompany(t, admin, ca, strconv.Itoa(3101123456+k))
		var sent struct{ Clave string }
		branch.json("POST", "/api/documents/v4", longInvoice(t, 1000), 200, &sent)
		// Settle the verdict first: a verdict arriving during the
		// downloads changes the printed state, and with it the size.
		var checked struct{ Estado string }
		branch.json("PUT", "/api/documents/"+sent.Clave+"/v4", nil, 200, &checked)
		if checked.Estado != "01" {
			t.Fatalf("the invoice is %s after its check, want 01", checked.Estado)
		}
		path := "/api/documents/" + sent.Clave + "/pdf/v4"
		status, body := branch.do("GET", path, "", nil)
		if status != 200 || len(body) < 50_000 {
			t.Fatalf("one PDF: %d, %d bytes", status, len(body))
		}
		docs = append(docs, pdfOf{branch, path, len(body)})
	}
	before := peakRSS(t, c.cmd.Process.Pid)

	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: parallel}}
	answers := map[int]int{}
	var mu sync.Mutex
	for range rounds {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range parallel {
			d := docs[i%len(docs)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				st, h, b, err := d.branch.try(hc, d.branch.base, "GET", d.path, "", nil)
				if err != nil {
					t.Errorf("GET the PDF: %v", err)
					return
				}
				switch {
				case st == 200 && len(b) == d.size:
				case st == 503 && h.Get("Retry-After") != "" && strings.Contains(string(b), "drawing as many PDFs"):
				case st == 429 && h.Get("Retry-After") != "":
				default:
					t.Errorf("answer %d (Retry-After %q, %d bytes): %.200s", st, h.Get("Retry-After"), len(b), b)
				}
				mu.Lock()
				answers[st]++
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
	}
	peak := peakRSS(t, c.cmd.Process.Pid)
	t.Logf("%d×%d parallel PDFs of 1,000 lines over %d companies: answers %v; peak RSS %d MiB before them, %d MiB after",
		rounds, parallel, companies, answers, before>>20, peak>>20)
	if answers[200] == 0 {
		t.Errorf("no PDF among the answers: %v", answers)
	}
	// A 503 is only answered with every process-wide slot held: 4
	// renders were in flight at once.
	if busy && answers[503] == 0 {
		t.Errorf("no download shed (503): the process-wide bound was never reached: %v", answers)
	}
	if peak > limit {
		t.Errorf("peak RSS %d MiB, want under %d MiB", peak>>20, limit>>20)
	}
}
