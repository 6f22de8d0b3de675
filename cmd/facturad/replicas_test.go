package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/hacienda/sandbox"
	"facturad/signer/certmint"
	"facturad/tenant/storetest"
)

// The shape of TestReplicas.
const (
	replicaCount       = 3
	replicaCompanies   = 3
	branchesPerCompany = 2
	docsPerBranch      = 30
	replicaSenders     = 8
	// replicaRate and replicaBurst are the per-company pace toward the tax
	// authority every replica is given: low, so that the senders, faster
	// than it, make the shared limit bind.
	replicaRate  = 5.0
	replicaBurst = 5
	// paceSlack is the tolerance of the pace check. The sandbox records
	// when a call arrives, not when a replica's limiter let it go; the time
	// in between varies (scheduling on a loaded machine, the race detector,
	// a token grant before a replica's first call for a company), and when
	// an earlier call is delayed more than a later one, their arrivals are
	// closer than their admissions were. Any window may therefore hold
	// rate × paceSlack calls (1.25 at 5/s) over burst + rate × its length,
	// and besides those the calls the replicas' limiters paced in process
	// because Redis failed (see checkPaces).
	paceSlack = 250 * time.Millisecond
	// settleWithin bounds the wait, after the last send, for every
	// document to reach its verdict.
	settleWithin = 60 * time.Second
)

// TestReplicas runs three replicas of the service on one PostgreSQL (a
// schema of its own) and one Redis, all sending to one tax-authority
// sandbox in a process of its own, with every company paced at 5 calls
// per second, burst 5. Eight clients send 180 documents of three
// companies with two branches each, round robin over the replicas, a
// third of them sent at the same moment to a second replica by another
// user of the branch, and a sixth sent again later to a third replica.
// Once every document is settled it checks, from the database and the
// sandbox's call record, that the replicas together kept each invariant
// that no single process can keep alone:
//
//   - the numbers of each branch, terminal and type are 1..n, each held by
//     exactly one document (no duplicate, no gap);
//   - every id_externo is exactly one document, and every answer to it
//     (whichever replica gave it) carries that document's clave;
//   - the tax authority received each clave exactly once;
//   - no company's calls to the tax authority (submissions and status
//     queries, from all replicas) ever exceeded the configured pace: for
//     every pair of its calls i < j, j−i+1 ≤ burst + rate·(tⱼ−tᵢ), within
//     paceSlack and the calls the replicas paced in process because Redis
//     failed (checkPaces); and they did reach it, so that the limit was
//     exercised.
func TestReplicas(t *testing.T) {
	notQuick(t, "a replica drill")
	redisURL := storetest.RedisURL(t)
	dbURL := postgresSchema(t)
	began := time.Now()
	sb, trust := startSandboxChild(t)
	replicas := startReplicas(t, dbURL, redisURL, sb, trust)
	db, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	branches := setUpBranches(t, replicas[0], db)
	jobs := replicaJobs(t, branches)
	t.Logf("sandbox, %d replicas, %d companies and %d branches ready in %v",
		len(replicas), replicaCompanies, len(branches), time.Since(began).Round(100*time.Millisecond))

	d := newDriver(replicas)
	sendStart := time.Now()
	d.run(t, jobs)
	sent := time.Since(sendStart)
	rows := settle(t, db, len(branches)*docsPerBranch)
	t.Logf("%d sends (%d at once with another replica) answered in %v: %d 503s (in progress) asked again, %d answered 500 (kept for the worker); settled %v later",
		d.sends.Load(), d.twins.Load(), sent.Round(100*time.Millisecond), d.busy.Load(), d.unsent.Load(),
		(time.Since(sendStart) - sent).Round(100*time.Millisecond))

	report(t, "numbering", checkNumbers(rows))
	planned := map[string]bool{}
	for _, j := range jobs {
		planned[idKey(j.branch.branchID, j.id)] = true
	}
	report(t, "id_externo", checkIDs(rows, planned, d.answered()))
	calls := sandboxCalls(t, sb)
	report(t, "submissions", checkPosts(rows, calls.Posts))
	checkPaces(t, branches, rows, calls, replicas)
}

// report fails the test with each violation of one invariant.
func report(t *testing.T, what string, violations []string) {
	t.Helper()
	const most = 20
	for i, v := range violations {
		if i == most {
			t.Errorf("%s: and %d more", what, len(violations)-most)
			break
		}
		t.Errorf("%s: %s", what, v)
	}
}

// sandboxLine is what `facturad sandbox` prints once it listens.
var sandboxLine = regexp.MustCompile(`sandbox listening: api (\S+)\s+token (\S+)`)

// startSandboxChild runs `facturad sandbox` in a process of its own,
// verdicts at once, with the further flags args; its child's api is the
// reception API's base URL and admin the token endpoint's. trust are the
// flags that make a service trust its answers (its --answer-ca-out and
// identification).
func startSandboxChild(t *testing.T, args ...string) (sb *child, trust []string) {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "answer-ca.pem")
	cmd := exec.Command(os.Args[0], append([]string{"sandbox", "--listen", "127.0.0.1:0", "--delay", "0", "--log-level", "warn", "--answer-ca-out", ca}, args...)...)
	cmd.Env = append(os.Environ(), asServiceEnv+"=1")
	return launchUntil(t, cmd, sandboxLine), []string{"--hacienda-trust-bundle", ca, "--hacienda-answer-signer", sandbox.AnswerIdentification}
}

// startReplicas starts the replicas, one after the other (the first
// creates the bootstrap admin), on one database, Redis and master key.
func startReplicas(t *testing.T, dbURL, redisURL string, sb *child, trust []string) []*child {
	t.Helper()
	args := append(trust, "--database-url", dbURL, "--redis-url", redisURL, "--master-key", masterKey(t),
		"--hacienda-env", "staging", "--hacienda-api-url", sb.api, "--hacienda-token-url", sb.admin,
		"--hacienda-rate", fmt.Sprint(replicaRate), "--hacienda-burst", fmt.Sprint(replicaBurst),
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	var out []*child
	for range replicaCount {
		out = append(out, startChild(t, nil, args...))
	}
	return out
}

// replicaBranch is a branch the test sends for, with two API users.
type replicaBranch struct {
	companyID, branchID int64
	// haciendaUser is the company's tax-authority user name.
	haciendaUser string
	users        [2]apiClient
}

// setUpBranches creates the companies through the first replica, each
// with its first branch and a second one, and a second API user in each
// branch.
func setUpBranches(t *testing.T, first *child, db *pgxpool.Pool) []*replicaBranch {
	t.Helper()
	ctx := context.Background()
	admin := apiClient{t: t, base: "http://" + first.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	var out []*replicaBranch
	for c := range replicaCompanies {
		id := fmt.Sprintf("31011%05d", c+1)
		owner := createCompany(t, admin, ca, id)
		b := &replicaBranch{haciendaUser: "cpj-" + id + "@stag.comprobanteselectronicos.go.cr"}
		if err := db.QueryRow(ctx, `SELECT b.company_id, b.id FROM branches b JOIN companies c ON c.id = b.company_id
			WHERE c.numero_identificacion = $1 AND b.sucursal = '001'`, id).Scan(&b.companyID, &b.branchID); err != nil {
			t.Fatalf("company %s: %v", id, err)
		}
		b.users[0] = owner
		out = append(out, b)
		for s := 2; s <= branchesPerCompany; s++ {
			var nb struct {
				ID                            int64
				Usuario, Contrasena, APIToken string
			}
			owner.json("POST", fmt.Sprintf("/api/companies/%d/branches/v4", b.companyID),
				fmt.Appendf(nil, `{"sucursal": "%03d", "razonComercial": "Sucursal %d"}`, s, s), 200, &nb)
			out = append(out, &replicaBranch{companyID: b.companyID, branchID: nb.ID, haciendaUser: b.haciendaUser,
				users: [2]apiClient{{t: t, base: admin.base, token: nb.APIToken, user: nb.Usuario, pass: nb.Contrasena}}})
		}
	}
	for _, b := range out {
		var u struct{ Usuario, Contrasena, APIToken string }
		b.users[0].json("POST", fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", b.companyID, b.branchID),
			fmt.Appendf(nil, `{"usuario": "caja-%d"}`, b.branchID), 200, &u)
		b.users[1] = apiClient{t: t, base: admin.base, token: u.APIToken, user: u.Usuario, pass: u.Contrasena}
	}
	return out
}

// sendJob is one document's request, sent to a replica by one of the
// branch's users, and at the same moment to the next replica by the other
// when twin is set.
type sendJob struct {
	branch  *replicaBranch
	id      string
	body    []byte
	replica int
	user    int
	twin    bool
}

// replicaJobs are the sends of the test: docsPerBranch documents in every
// branch, FE and TE on terminals 00001 and 00002 (four numbering
// sequences per branch), round robin over the replicas and the branches;
// every third sent at once to two replicas; every sixth (of the others)
// sent again at the end to a third replica.
func replicaJobs(t *testing.T, branches []*replicaBranch) []sendJob {
	t.Helper()
	reqs := sample.Requests(4, len(hacienda.DocumentTypes))
	kinds := []*hacienda.SendDocumentRequest{reqs[0], reqs[3]} // FE, TE
	var jobs, again []sendJob
	for k := range docsPerBranch {
		for bi, b := range branches {
			r := *kinds[k%2]
			r.IDExterno = fmt.Sprintf("rep-%d-%d-%03d", b.companyID, b.branchID, k)
			r.Terminal = hacienda.FlexString(fmt.Sprintf("%05d", 1+k/2%2))
			r.FechaEmision, r.Clave = "", "" // the service numbers and stamps it
			body, err := json.Marshal(&r)
			if err != nil {
				t.Fatal(err)
			}
			j := sendJob{branch: b, id: r.IDExterno, body: body, replica: (k*len(branches) + bi) % replicaCount, twin: k%3 == 0}
			jobs = append(jobs, j)
			if k%6 == 1 {
				j.replica, j.user = (j.replica+2)%replicaCount, 1
				again = append(again, j)
			}
		}
	}
	return append(jobs, again...)
}

// driver sends the jobs and keeps every answer.
type driver struct {
	bases []string
	hc    *http.Client

	mu      sync.Mutex
	answers map[string][]string // "branch/id_externo": the claves answered

	sends, twins, busy, unsent atomic.Int64
}

func newDriver(replicas []*child) *driver {
	d := &driver{
		hc:      &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * replicaSenders}},
		answers: map[string][]string{},
	}
	for _, r := range replicas {
		d.bases = append(d.bases, "http://"+r.api)
	}
	return d
}

// run sends the jobs from replicaSenders clients at once.
func (d *driver) run(t *testing.T, jobs []sendJob) {
	queue := make(chan sendJob)
	var wg sync.WaitGroup
	for range replicaSenders {
		wg.Go(func() {
			for j := range queue {
				var pair sync.WaitGroup
				if j.twin {
					d.twins.Add(1)
					pair.Go(func() { d.sendOne(t, j, (j.replica+1)%replicaCount, 1-j.user) })
				}
				d.sendOne(t, j, j.replica, j.user)
				pair.Wait()
			}
		})
	}
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	wg.Wait()
}

// sendOne sends j's request to a replica as one of its branch's users and
// records the clave answered.
func (d *driver) sendOne(t *testing.T, j sendJob, replica, user int) {
	d.sends.Add(1)
	clave, err := d.send(d.bases[replica], j.branch.users[user], j.body)
	if err != nil {
		t.Errorf("%s to replica %d: %v", j.id, replica, err)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := idKey(j.branch.branchID, j.id)
	d.answers[k] = append(d.answers[k], clave)
}

// send posts a send request until it is answered with a document: 200,
// or 500 with estado 05 (stored, to be submitted by the background
// worker). A 503 with Retry-After (another call is sending the same
// id_externo, or a queue is full) is asked again shortly, for at most 45 s.
func (d *driver) send(base string, c apiClient, body []byte) (string, error) {
	deadline := time.Now().Add(45 * time.Second)
	for {
		status, header, b, err := c.try(d.hc, base, "POST", "/api/documents/v4", "application/json", body)
		if err != nil {
			return "", err
		}
		var doc document
		_ = json.Unmarshal(b, &doc)
		switch {
		case status == 200 && len(doc.Clave) == 50:
			return doc.Clave, nil
		case status == 500 && doc.Estado == "05" && len(doc.Clave) == 50:
			d.unsent.Add(1)
			return doc.Clave, nil
		case status == 503 && header.Get("Retry-After") != "" && time.Now().Before(deadline):
			d.busy.Add(1)
			time.Sleep(200 * time.Millisecond)
		default:
			return "", fmt.Errorf("status %d: %s", status, b)
		}
	}
}

func idKey(branch int64, id string) string { return fmt.Sprintf("%d/%s", branch, id) }

// answered is every clave answered, per id_externo.
func (d *driver) answered() map[string][]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string][]string, len(d.answers))
	for k, v := range d.answers {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// docRow is a stored document, as the checks read it.
type docRow struct {
	CompanyID, Branch                           int64
	Terminal, Tipo                              string
	Numero                                      int64
	Consecutivo, Clave, IDExterno, Estado, Last string
	SignedXML                                   int
}

// readDocuments reads every stored document.
func readDocuments(t *testing.T, db *pgxpool.Pool) []docRow {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT company_id, branch_id, terminal, tipo, numero, consecutivo,
		clave, id_externo, estado, last_error, coalesce(length(signed_xml), 0) FROM documents ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []docRow
	for rows.Next() {
		var r docRow
		if err := rows.Scan(&r.CompanyID, &r.Branch, &r.Terminal, &r.Tipo, &r.Numero, &r.Consecutivo,
			&r.Clave, &r.IDExterno, &r.Estado, &r.Last, &r.SignedXML); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// settle waits until want documents are stored and none is still on its
// way (00, 04 or 05), then requires every one accepted (01).
func settle(t *testing.T, db *pgxpool.Pool, want int) []docRow {
	t.Helper()
	deadline := time.Now().Add(settleWithin)
	for {
		rows := readDocuments(t, db)
		open := 0
		for _, r := range rows {
			switch r.Estado {
			case "00", "04", "05":
				open++
			}
		}
		if len(rows) >= want && open == 0 {
			for _, r := range rows {
				if r.Estado != "01" {
					t.Errorf("%s (%s): estado %s, %q", r.IDExterno, r.Clave, r.Estado, r.Last)
				}
			}
			return rows
		}
		if time.Now().After(deadline) {
			t.Errorf("%v after the last send, %d documents stored (want %d), %d not settled", settleWithin, len(rows), want, open)
			return rows
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// sandboxCalls reads the sandbox's call record over its admin endpoint.
func sandboxCalls(t *testing.T, sb *child) sandbox.Calls {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(sb.api, sandbox.DefaultBasePath) + "/_sandbox/calls")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c sandbox.Calls
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /_sandbox/calls: %d %v", resp.StatusCode, err)
	}
	return c
}
