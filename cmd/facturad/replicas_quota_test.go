package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"facturad/hacienda/api"
	"facturad/signer/certmint"
	"facturad/tenant/storetest"
)

// The shape of TestReplicasQuota.
const (
	quotaLimit      = 12 // the company's cuotaMensual
	quotaDocuments  = 40 // distinct documents sent, far beyond it
	quotaSenders    = 10 // clients sending at once
	quotaTwinsEvery = 4  // every fourth document is also sent at once to a second replica
)

// TestReplicasQuota runs three replicas on one PostgreSQL and one Redis and
// has ten clients send, all at once and round robin over the replicas and
// the company's two branches, 40 documents of a company whose monthly
// quota is 12, a fourth of them sent at the same moment to a second
// replica too. However the replicas interleave:
//
//   - exactly 12 documents are numbered (the database holds 12, each
//     sequence 1..n without a gap), and every other send is a 402 naming
//     cuotaMensual with Facturad-Documentos-Disponibles: 0;
//   - no id_externo is answered both with a document and with a 402: the
//     copy sent to a second replica is the same document, never refused
//     and never counted;
//   - the 12 numbering answers said 11, 10, ..., 0 documents still
//     available, each once.
func TestReplicasQuota(t *testing.T) {
	notQuick(t, "a replica drill")
	redisURL := storetest.RedisURL(t)
	dbURL := postgresSchema(t)
	sb, trust := startSandboxChild(t)
	replicas := startReplicas(t, dbURL, redisURL, sb, trust)
	db, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)

	admin := apiClient{t: t, base: "http://" + replicas[0].api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	first, companyID := createCompanyWith(t, admin, ca, "3101777777", certmint.Options{}, map[string]string{"cuotaMensual": strconv.Itoa(quotaLimit)})
	var nb struct{ Usuario, Contrasena, APIToken string }
	first.json("POST", fmt.Sprintf("/api/companies/%d/branches/v4", companyID), []byte(`{"sucursal": "002", "razonComercial": "Sucursal 2"}`), 200, &nb)
	users := []apiClient{first, {t: t, token: nb.APIToken, user: nb.Usuario, pass: nb.Contrasena}}

	type job struct {
		id      string
		body    []byte
		user    int
		replica int
	}
	reqs := sendRequests(t, "x")
	var jobs []job
	for i := range quotaDocuments {
		var r map[string]any
		if err := json.Unmarshal(reqs[0], &r); err != nil { // an FE
			t.Fatal(err)
		}
		r["id_externo"] = fmt.Sprintf("cuota-%02d", i)
		body, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		j := job{id: r["id_externo"].(string), body: body, user: i % 2, replica: i % replicaCount}
		jobs = append(jobs, j)
		if i%quotaTwinsEvery == 0 {
			j.replica = (j.replica + 1) % replicaCount
			jobs = append(jobs, j)
		}
	}

	// Every answer, per id_externo: the status, and the header.
	type answer struct {
		status    int
		available string
		clave     string
	}
	var (
		mu      sync.Mutex
		answers = map[string][]answer{}
	)
	hc := checkedHTTP(t)
	hc.Timeout = 60 * time.Second
	send := func(j job) {
		deadline := time.Now().Add(45 * time.Second)
		for {
			c := users[j.user]
			status, header, b, err := c.try(hc, "http://"+replicas[j.replica].api, "POST", "/api/documents/v4", "application/json", j.body)
			if err != nil {
				t.Errorf("%s: %v", j.id, err)
				return
			}
			var doc document
			_ = json.Unmarshal(b, &doc)
			switch {
			case status == 503 && time.Now().Before(deadline):
				// The twin is being sent by the other replica: ask again.
				time.Sleep(100 * time.Millisecond)
				continue
			case status == 402:
				var e struct {
					StatusCode int                 `json:"statusCode"`
					Errors     map[string][]string `json:"errors"`
				}
				if err := json.Unmarshal(b, &e); err != nil || e.StatusCode != 402 || len(e.Errors[api.FieldCuotaMensual]) != 1 {
					t.Errorf("%s: 402 %s", j.id, b)
				}
			case (status == 200 || status == 500 && doc.Estado == "05") && len(doc.Clave) == 50:
			default:
				t.Errorf("%s: status %d: %s", j.id, status, b)
				return
			}
			mu.Lock()
			answers[j.id] = append(answers[j.id], answer{status, header.Get(api.HeaderDocumentosDisponibles), doc.Clave})
			mu.Unlock()
			return
		}
	}
	queue := make(chan job)
	var wg sync.WaitGroup
	for range quotaSenders {
		wg.Go(func() {
			for j := range queue {
				send(j)
			}
		})
	}
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	wg.Wait()

	numbered, refused := 0, 0
	var firsts []int
	for id, as := range answers {
		var statuses []int
		claves := map[string]bool{}
		best := -1
		for _, a := range as {
			statuses = append(statuses, a.status)
			n, err := strconv.Atoi(a.available)
			if err != nil || n < 0 {
				t.Errorf("%s: %s %q", id, api.HeaderDocumentosDisponibles, a.available)
			}
			if a.status == 402 {
				if n != 0 {
					t.Errorf("%s: a 402 with %d available", id, n)
				}
				continue
			}
			claves[a.clave] = true
			best = max(best, n) // the numbering answer's; a replay says as much or less
		}
		switch {
		case !slices.Contains(statuses, 402):
			numbered++
			firsts = append(firsts, best)
			if len(claves) != 1 {
				t.Errorf("%s: answered with %d claves", id, len(claves))
			}
		case slices.ContainsFunc(statuses, func(s int) bool { return s != 402 }):
			t.Errorf("%s: answered both with a document and with a 402: %v", id, statuses)
		default:
			refused++
		}
	}
	if numbered != quotaLimit || refused != quotaDocuments-quotaLimit {
		t.Errorf("%d documents numbered and %d refused, want %d and %d", numbered, refused, quotaLimit, quotaDocuments-quotaLimit)
	}
	slices.Sort(firsts)
	for i, n := range firsts {
		if n != i {
			t.Errorf("the numbering answers said %v available, want 0..%d once each", firsts, quotaLimit-1)
			break
		}
	}

	// The database agrees: exactly the quota stored, numbered without a
	// gap, and the month's count at the quota.
	rows := readDocuments(t, db)
	if len(rows) != quotaLimit {
		t.Errorf("%d documents stored, want %d", len(rows), quotaLimit)
	}
	report(t, "numbering", checkNumbers(rows))
	var counted int64
	if err := db.QueryRow(context.Background(), `SELECT documentos FROM company_usage WHERE company_id = $1`, companyID).Scan(&counted); err != nil || counted != quotaLimit {
		t.Errorf("company_usage: %d, %v; want %d", counted, err, quotaLimit)
	}
	// And the usage call, from any replica, says so.
	var u api.Uso
	status, b := admin.do(http.MethodGet, fmt.Sprintf("/api/companies/%d/uso/v4", companyID), "", nil)
	if err := json.Unmarshal(b, &u); err != nil || status != 200 || u.Documentos.Total != quotaLimit {
		t.Errorf("usage: %d %s", status, b)
	}
	t.Logf("%d sends (%d documents, %d sent twice at once): %d numbered, %d refused", len(jobs), quotaDocuments,
		len(jobs)-quotaDocuments, numbered, refused)
}
