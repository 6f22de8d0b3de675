package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/tenant"
	"facturad/tenant/postgres"
	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// outage is a way to take a store's backing service away and give it back.
type outage interface {
	down()
	up()
}

// TestStoreOutageAnswers503: while the store cannot be used (PostgreSQL
// behind a proxy that drops every connection; SQLite's file locked by
// another process past the busy timeout), calls that need it answer 503
// with Retry-After in the A.7 form (an A.6 route too), counted as 5xx and
// logged once per route however many fail; the Go client retries such an
// answer and succeeds once the store is back; and what was stored before
// and during the outage is there once, intact.
func TestStoreOutageAnswers503(t *testing.T) {
	for _, k := range []struct {
		name string
		open func(t *testing.T) (tenant.Store, outage)
		// reads says whether reads fail too (SQLite's readers, in WAL
		// mode, are not held by a writer's lock).
		reads bool
	}{
		{"sqlite", openLockableSQLite, false},
		{"postgres", openProxiedPostgres, true},
	} {
		t.Run(k.name, func(t *testing.T) {
			store, out := k.open(t)
			w, svc := newTenantWorld(t, store)
			w.testBundle = setup(t, Options{Tenants: svc})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go func() { _ = w.srv.Serve(ln) }()
			co := w.createCompany(t, w.admin, "3101123456", "Apagón de Prueba S.A.")
			branches := "/api/companies/" + strconv.FormatInt(co.id, 10) + "/branches/v4"
			before := w.do(t, "GET", branches, &w.admin, "", nil)
			if before.status != 200 {
				t.Fatalf("list branches: %d %s", before.status, before.body)
			}

			out.down()
			// A change (branch create, an A.6 route: its 503 is the A.7 form).
			body := []byte(`{"sucursal":"002","razonComercial":"Sucursal del apagón"}`)
			for range 3 {
				r := w.do(t, "POST", branches, &w.admin, "application/json", body)
				requireUnavailable(t, "branch create", r)
			}
			if k.reads {
				r := w.do(t, "GET", branches, &w.admin, "", nil)
				requireUnavailable(t, "branch list", r)
			}
			m := string(doWith(t, w.testBundle.admin, "GET", "/metrics", nil, "", nil).body)
			failed := requestCount(t, m, "POST", pathBranches, "5xx")
			if failed != 3 {
				t.Errorf(`branch create: status="5xx" is %d after 3 answers 503, want 3`, failed)
			}
			if n := requestCount(t, m, "POST", pathBranches, "shed"); n != 0 {
				t.Errorf(`branch create: status="shed" is %d: a store outage is a failure, not load`, n)
			}
			if n := strings.Count(w.logs.String(), `"msg":"request failed: store unavailable; answered 503"`); n < 1 || n > 2 {
				t.Errorf("%d log lines for the failed calls of two routes, want one per route (sampled):\n%s", n, w.logs.String())
			}
			if strings.Contains(w.logs.String(), `"msg":"request failed",`) {
				t.Errorf("a store outage was logged as an incident (500):\n%s", w.logs.String())
			}

			// The Go client retries the 503s and gets through once the
			// store is back.
			c, err := client.New("http://"+ln.Addr().String(), client.WithCredentials(w.admin.user, w.admin.pass, w.admin.token),
				client.WithRetry(client.RetryPolicy{MaxAttempts: 20, MaxWait: 5 * time.Second}))
			if err != nil {
				t.Fatal(err)
			}
			var (
				created *client.CreatedBranch
				callErr error
				done    = make(chan struct{})
			)
			go func() {
				defer close(done)
				created, callErr = c.CreateBranch(context.Background(), co.id, client.BranchInput{Sucursal: "002", RazonComercial: "Sucursal del apagón"})
			}()
			deadline := time.Now().Add(10 * time.Second)
			for {
				m := string(doWith(t, w.testBundle.admin, "GET", "/metrics", nil, "", nil).body)
				if requestCount(t, m, "POST", pathBranches, "5xx") > failed {
					break // the client met a 503
				}
				if time.Now().After(deadline) {
					t.Fatal("the client's call never reached the service during the outage")
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			out.up()
			<-done
			if callErr != nil {
				t.Fatalf("the client's branch create after the outage: %v", callErr)
			}
			if created.Sucursal != "002" || created.ID == 0 || created.APIToken == "" {
				t.Errorf("created branch %+v", created)
			}

			// Nothing lost, nothing twice: the branches before, and the
			// one made through the outage, once.
			after, err := c.ListBranches(context.Background(), co.id)
			if err != nil {
				t.Fatal(err)
			}
			var was []client.Branch
			if err := json.Unmarshal(before.body, &was); err != nil {
				t.Fatal(err)
			}
			if len(after) != len(was)+1 {
				t.Fatalf("%d branches after the outage, want %d: %+v", len(after), len(was)+1, after)
			}
			for i, b := range was {
				if after[i] != b {
					t.Errorf("branch %d changed over the outage:\n was %+v\n now %+v", b.ID, b, after[i])
				}
			}
			if got := after[len(after)-1]; got.ID != created.ID || got.Sucursal != "002" || got.RazonComercial != "Sucursal del apagón" {
				t.Errorf("the branch made through the outage reads %+v", got)
			}
			if r := w.do(t, "GET", "/api/companies/"+strconv.FormatInt(co.id, 10)+"/v4", &co.user, "", nil); r.status != 200 ||
				!strings.Contains(string(r.body), "Apagón de Prueba S.A.") {
				t.Errorf("the company after the outage: %d %s", r.status, r.body)
			}
		})
	}
}

// requireUnavailable checks a 503 with Retry-After in the A.7 form, with
// nothing of the cause (a host, a driver's words) in it.
func requireUnavailable(t *testing.T, what string, r reply) {
	t.Helper()
	if r.status != 503 {
		t.Fatalf("%s during the outage: %d %s, want 503", what, r.status, r.body)
	}
	if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 {
		t.Errorf("%s: Retry-After %q", what, r.header.Get("Retry-After"))
	}
	m := requireA7(t, r, 503)
	msg, _ := m["message"].(string)
	for _, leak := range []string{"127.0.0.1", "dial", "EOF", "SQLITE", "locked", "sqlstate"} {
		if strings.Contains(msg, leak) {
			t.Errorf("%s: the message quotes the cause (%q): %s", what, leak, msg)
		}
	}
}

// requestCount reads facturad_http_requests_total of one route and class
// from a /metrics text (0 when absent).
func requestCount(t *testing.T, metrics, method, route, class string) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^facturad_http_requests_total\{method="` + method + `",route="` + regexp.QuoteMeta(route) + `",status="` + class + `"\} (\d+)$`)
	g := re.FindStringSubmatch(metrics)
	if g == nil {
		return 0
	}
	n, err := strconv.Atoi(g[1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// openLockableSQLite opens a SQLite store whose file another connection
// (as another process would) locks for writing on down.
func openLockableSQLite(t *testing.T) (tenant.Store, outage) {
	path := filepath.Join(t.TempDir(), "facturad.db")
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	return s, &fileLock{t: t, db: other}
}

type fileLock struct {
	t    *testing.T
	db   *sql.DB
	conn *sql.Conn
}

func (l *fileLock) down() {
	conn, err := l.db.Conn(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		l.t.Fatal(err)
	}
	l.conn = conn
}

func (l *fileLock) up() {
	if _, err := l.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		l.t.Error(err)
	}
	_ = l.conn.Close()
}

// openProxiedPostgres opens a PostgreSQL store in a schema of its own
// through a TCP proxy that down makes drop every connection, open or new.
func openProxiedPostgres(t *testing.T) (tenant.Store, outage) {
	u, err := url.Parse(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := newDropProxy(t, u.Host)
	u.Host = p.addr()
	ctx := context.Background()
	s, err := postgres.Open(ctx, u.String(), postgres.Options{Schema: storetest.UniqueName(t), MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.up() // whatever the test left, so that the schema can be dropped
		if err := s.DropSchema(context.Background()); err != nil {
			t.Errorf("drop test schema: %v", err)
		}
		_ = s.Close()
	})
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s, p
}

// dropProxy forwards TCP connections to target; while down it closes every
// connection it holds and each new one at once, as a database that went
// away does.
type dropProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	isDown bool
	conns  map[net.Conn]struct{}
}

func newDropProxy(t *testing.T, target string) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.down()
	})
	return p
}

func (p *dropProxy) addr() string { return p.ln.Addr().String() }

func (p *dropProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *dropProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isDown {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *dropProxy) forward(c net.Conn) {
	defer c.Close()
	if !p.track(c) {
		return
	}
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	if !p.track(up) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
}

func (p *dropProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isDown = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *dropProxy) up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isDown = false
}
