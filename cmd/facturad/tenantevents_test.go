package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"facturad/gateway/client"
	"facturad/hacienda/api"
	"facturad/hacienda/sandbox"
	"facturad/pipeline/delivery/smtptest"
	"facturad/signer/certmint"
	"facturad/tenant/storetest"
)

// eventTally is what a webhook receiver and a mail server got of the
// tenant events: the event ids per event name, and each id's data.
type eventTally struct {
	hooks, mails map[string][]string
	data         map[string]api.TenantEventData
}

// tally reads the receiver's events (by id, so a repeated delivery of one
// event counts once, as its receiver de-duplicates) and the messages the
// mail server took (by the id each notice ends with).
func tally(t *testing.T, rcv *hookReceiver, st *smtptest.Server) eventTally {
	t.Helper()
	out := eventTally{hooks: map[string][]string{}, mails: map[string][]string{}, data: map[string]api.TenantEventData{}}
	rcv.mu.Lock()
	for id, ev := range rcv.events {
		out.hooks[ev.Evento] = append(out.hooks[ev.Evento], id)
		var d api.TenantEventData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Errorf("event %s data %s: %v", id, ev.Data, err)
		}
		out.data[id] = d
	}
	rcv.mu.Unlock()
	idLine := regexp.MustCompile(`Evento: (\S+)\r?\nId: (evt_\w+)`)
	for _, m := range st.Received() {
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		text := noticeText(t, msg)
		g := idLine.FindStringSubmatch(text)
		if g == nil {
			t.Fatalf("a message that is no notice:\n%s", text)
		}
		out.mails[g[1]] = append(out.mails[g[1]], g[2])
	}
	return out
}

// noticeText is a notice's text part, decoded.
func noticeText(t *testing.T, m *mail.Message) string {
	t.Helper()
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := multipart.NewReader(m.Body, params["boundary"]).NextPart()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(p)
	if err != nil {
		t.Fatal(err)
	}
	text, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(raw)))
	if err != nil {
		t.Fatalf("notice text: %v", err)
	}
	return string(text)
}

// TestTenantEventsExactlyOnce runs two replicas of the real service on one
// PostgreSQL and Redis, with a real webhook endpoint and a real mail
// server, and checks that each tenant event reaches both exactly once per
// occasion: credentials refused on sends to both replicas at once (one
// stop, one credenciales.rechazadas); then, the certificate 10 days from
// its expiry and the documents stuck past the hour (the store set as time
// would leave it), both replicas killed and started again at once, both
// checking the certificate at start-up and racing for the hourly sweep
// (one certificado.por_vencer, one documentos.detenidos naming the
// documents); then killed and started again: nothing more.
func TestTenantEventsExactlyOnce(t *testing.T) {
	notQuick(t, "a replica drill")
	ctx := context.Background()
	dbURL := postgresSchema(t)
	redisURL := storetest.RedisURL(t)
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	sb := sandbox.NewTestServer(t, sandbox.Options{})
	st := smtptest.New(t)
	caFile := filepath.Join(t.TempDir(), "smtp-ca.pem")
	if err := os.WriteFile(caFile, st.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	// The replicas trust the mail server's certificate as a system root
	// (STARTTLS verifies it).
	env := []string{"SSL_CERT_FILE=" + caFile}
	args := append([]string{"--database-url", dbURL, "--redis-url", redisURL, "--master-key", masterKey(t),
		"--hacienda-env", "sandbox", "--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL,
		"--webhook-allow-private", "--delivery-backoff", "200ms",
		"--smtp-url", st.URL(), "--smtp-from", "Avisos <avisos@facturad.example>",
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken},
		trustSandbox(t, sb)...)
	start := func() [2]*child {
		t.Helper()
		// Spawned together, so that their start-up checks race.
		var cs [2]*child
		for i := range cs {
			cmd := exec.Command(os.Args[0], serveArgs(args...)...)
			cmd.Env = append(append(os.Environ(), asServiceEnv+"=1"), env...)
			cs[i] = spawn(t, cmd)
		}
		for _, c := range cs {
			c.waitListening(t, listenLine)
		}
		return cs
	}
	replicas := start()
	admin := apiClient{t: t, base: "http://" + replicas[0].api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	const ident, notices = "3101246810", "avisos@empresa.example"
	branch, companyID := createCompanyWith(t, admin, ca, ident, certmint.Options{NotAfter: time.Now().AddDate(2, 0, 0)},
		map[string]string{"correoNotificaciones": notices})
	branch.base = "http://" + replicas[1].api
	rcv := newHookReceiver(t)
	rcv.up.Store(true)
	var hook client.WebhookCreated
	branch.json("POST", fmt.Sprintf("/api/companies/%d/webhooks/v4", companyID),
		fmt.Appendf(nil, `{"url":%q,"eventos":["certificado.por_vencer","certificado.vencido","credenciales.rechazadas","documentos.detenidos"]}`, rcv.srv.URL+"/avisos"),
		200, &hook)
	rcv.secret.Store(hook.Secreto)

	// The tax authority refuses the company's credentials; documents are
	// sent to both replicas at once.
	if err := sb.SetFaults(sandbox.Faults{TokenRefusal: 401}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		c := branch
		c.base = "http://" + replicas[i%2].api
		b := bytes.Replace(sendRequests(t, "aviso")[0], []byte(`"aviso-0"`), fmt.Appendf(nil, `"aviso-%d"`, i), 1)
		wg.Go(func() { c.do("POST", "/api/documents/v4", "application/json", b) })
	}
	wg.Wait()
	if err := sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	var stuck []string
	if err := db.QueryRow(ctx, `SELECT coalesce(array_agg(clave ORDER BY created_at, id), '{}') FROM documents
WHERE company_id = $1 AND estado IN ('00', '04', '05')`, companyID).Scan(&stuck); err != nil {
		t.Fatal(err)
	}
	if len(stuck) != 4 {
		t.Fatalf("%d documents unsettled after the refused sends, want 4", len(stuck))
	}
	waitUntil(t, 60*time.Second, "the credentials' event delivered and mailed", func() bool {
		got := tally(t, rcv, st)
		return len(got.hooks[client.EventCredentialsRefused]) > 0 && len(got.mails[client.EventCredentialsRefused]) > 0
	})

	// Time passes: the certificate is 10 days from its expiry and the
	// documents were numbered two hours ago; the hourly sweep's lease
	// has ended. Both replicas die and start again at once.
	if _, err := db.Exec(ctx, `UPDATE companies SET certificate_expiry = now() + interval '10 days' WHERE id = $1`, companyID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `UPDATE documents SET created_at = created_at - interval '2 hours' WHERE company_id = $1`, companyID); err != nil {
		t.Fatal(err)
	}
	// restart kills both replicas, ends the sweep's lease and starts them
	// again at once; it returns once one of them has taken the lease (and
	// so swept).
	restart := func() {
		t.Helper()
		for _, c := range replicas {
			c.kill()
		}
		if _, err := db.Exec(ctx, `DELETE FROM leases WHERE name = 'tenant-events'`); err != nil {
			t.Fatal(err)
		}
		replicas = start()
		waitUntil(t, 30*time.Second, "a replica swept", func() bool {
			var n int
			if err := db.QueryRow(ctx, `SELECT count(*) FROM leases WHERE name = 'tenant-events'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 1
		})
	}
	restart()
	want := []string{client.EventCertificateExpiring, client.EventCredentialsRefused, client.EventDocumentsStuck}
	waitUntil(t, 60*time.Second, "every event delivered and mailed", func() bool {
		got := tally(t, rcv, st)
		for _, e := range want {
			if len(got.hooks[e]) == 0 || len(got.mails[e]) == 0 {
				return false
			}
		}
		return true
	})
	check := func(when string) {
		t.Helper()
		got := tally(t, rcv, st)
		var names []string
		for e := range got.hooks {
			names = append(names, e)
		}
		sort.Strings(names)
		if fmt.Sprint(names) != fmt.Sprint(want) {
			t.Errorf("%s: events delivered %v, want %v", when, names, want)
		}
		for _, e := range want {
			if len(got.hooks[e]) != 1 || len(got.mails[e]) != 1 || got.hooks[e][0] != got.mails[e][0] {
				t.Errorf("%s: %s delivered as %v and mailed as %v, want one event both ways", when, e, got.hooks[e], got.mails[e])
			}
		}
		for id, d := range got.data {
			if d.CompaniaID != companyID || d.NumeroIdentificacion != ident || d.Ambiente == "" {
				t.Errorf("%s: event %s names %+v", when, id, d)
			}
		}
		if ids := got.hooks[client.EventDocumentsStuck]; len(ids) == 1 {
			if d := got.data[ids[0]]; fmt.Sprint(d.Claves) != fmt.Sprint(stuck) || d.Cantidad != 4 {
				t.Errorf("%s: documentos.detenidos names %v (%d), want %v", when, d.Claves, d.Cantidad, stuck)
			}
		}
		if ids := got.hooks[client.EventCertificateExpiring]; len(ids) == 1 && got.data[ids[0]].ExpiracionCertificado == "" {
			t.Errorf("%s: certificado.por_vencer without its expiry", when)
		}
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		if rcv.bad != 0 {
			t.Errorf("%s: %d deliveries with a bad signature", when, rcv.bad)
		}
		for _, m := range st.Received() {
			if strings.Join(m.To, ",") != notices {
				t.Errorf("%s: a notice to %v, want %s", when, m.To, notices)
			}
		}
	}
	check("after the restart")

	// Once more: both replicas check again at start-up and one sweeps;
	// every occasion was recorded, so nothing more is sent.
	restart()
	time.Sleep(3 * time.Second) // the checks, the deliverers' and the mailers' polls, several times over
	check("after a second restart")
}

// waitUntil polls cond every 100 ms until it holds, failing after within.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
