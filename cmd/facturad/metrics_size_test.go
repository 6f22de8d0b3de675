package main

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"facturad/gateway"
	"facturad/hacienda/sandbox"
	"facturad/signer/certmint"
	"facturad/tenant/storetest"
)

// metricsSizeLimit is the most /metrics may weigh, in bytes, on a replica
// that has seen everything it realistically sees.
const metricsSizeLimit = 100_000

// routeCounter finds the (method, route, status class) of the HTTP
// request counters, which exist for every route from the start.
var routeCounter = regexp.MustCompile(`(?m)^facturad_http_requests_total\{method="([A-Z]*)",route="([^"]+)",status="(\dxx)"\} (\S+)$`)

// routeHistogram finds the label sets of the HTTP duration histograms.
var routeHistogram = regexp.MustCompile(`(?m)^facturad_http_request_duration_seconds_count\{(.*)\} `)

// /metrics stays under 100,000 bytes on the largest replica it can
// realistically be: 50 companies, every route called (as a company's user
// and as the admin, answering 2xx and 4xx), every route of the store
// answering 5xx while the store is away, the tax authority answering with
// errors, rate limits, refused grants and cut connections, and requests no
// route takes (404, 405). On the embedded store, and on PostgreSQL and
// Redis, whose pool series add to it.
func TestMetricsSize(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 50 companies")
	}
	t.Run("embedded", func(t *testing.T) {
		sb := sandbox.NewTestServer(t, sandbox.Options{})
		metricsWorstCase(t, sb, nil, append([]string{"--hacienda-env", "staging", "--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL},
			trustSandbox(t, sb)...)...)
	})
	t.Run("postgres+redis", func(t *testing.T) {
		dbURL, db := proxyURL(t, postgresSchema(t))
		sb := sandbox.NewTestServer(t, sandbox.Options{})
		metricsWorstCase(t, sb, db, append([]string{"--database-url", dbURL, "--redis-url", storetest.RedisURL(t), "--master-key", masterKey(t),
			"--hacienda-env", "staging", "--hacienda-api-url", sb.APIURL, "--hacienda-token-url", sb.TokenURL}, trustSandbox(t, sb)...)...)
	})
}

// metricsWorstCase runs the service with extra arguments against sb, drives
// it through everything that adds series, and measures /metrics. With db
// (the store's proxy), the store is cut while every route is called once
// more, and restored before the measure, so that the store-wide gauges,
// which a replica withdraws while it cannot read them, are in it.
func metricsWorstCase(t *testing.T, sb *sandbox.TestServer, db *cutProxy, extra ...string) {
	_, api, admin, stop := startService(t, t.TempDir(), append(extra,
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken,
		"--state-metrics-interval", "100ms")...)
	defer stop()
	ops := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	type company struct {
		user  apiClient
		clave string
	}
	var companies []company
	for i := range 50 {
		u := createCompany(t, ops, ca, fmt.Sprintf("3101%06d", 500000+i))
		var sent document
		u.json("POST", "/api/documents/v4", sendRequests(t, fmt.Sprintf("size-%d", i))[0], 200, &sent)
		companies = append(companies, company{u, sent.Clave})
	}

	// The route table, from the counters every route has from the start.
	type route struct{ method, pattern string }
	var routes []route
	seen := map[route]bool{}
	for _, m := range routeCounter.FindAllStringSubmatch(metricsText(t, admin), -1) {
		r := route{m[1], m[2]}
		if r.pattern == "unmatched" || seen[r] {
			continue
		}
		seen[r] = true
		routes = append(routes, r)
	}
	if len(routes) < 25 {
		t.Fatalf("only %d routes found in /metrics", len(routes))
	}
	callEvery := func() {
		for _, r := range routes {
			for _, c := range companies[:3] { // the labels do not grow with the companies
				path := strings.NewReplacer("{clave}", c.clave, "{companyId}", "1", "{branchId}", "1",
					"{userId}", "1", "{id}", "1").Replace(r.pattern)
				for _, who := range []apiClient{c.user, ops} {
					who.do(r.method, path+"?includeData=true", "application/json", []byte(`{}`))
				}
			}
		}
	}
	callEvery()
	for _, m := range []string{"GET", "DELETE"} { // 404 and 405
		ops.do(m, "/no/such/route", "", nil)
		ops.do(m, "/api/documents/v4", "", nil)
	}

	// The tax authority failing in each way it fails: server errors and
	// rate limits (with Retry-After), refusals, cut connections, lost
	// answers, refused grants (a company without a token yet).
	next := 0
	send := func(c apiClient) {
		next++
		c.do("POST", "/api/documents/v4", "application/json", sendRequests(t, fmt.Sprintf("fault-%d", next))[0])
	}
	faults := []sandbox.Faults{
		{ErrorRates: map[int]float64{500: 1}},
		{ErrorRates: map[int]float64{503: 1}, RetryAfter: sandbox.Duration(time.Second)},
		{ErrorRates: map[int]float64{429: 1}, RetryAfter: sandbox.Duration(time.Second)},
		{ErrorRates: map[int]float64{400: 1}},
		{Outage: true},
		{DropRate: 1},
	}
	for i, f := range faults {
		if err := sb.SetFaults(f); err != nil {
			t.Fatal(err)
		}
		send(companies[3+i].user)
		companies[3+i].user.do("PUT", "/api/documents/"+companies[3+i].clave+"/v4", "", nil)
	}
	if err := sb.SetFaults(sandbox.Faults{TokenRefusal: 401}); err != nil {
		t.Fatal(err)
	}
	send(createCompany(t, ops, ca, "3101999999"))
	if err := sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}

	if db != nil {
		db.Cut()
		callEvery()
		db.Restore()
		waitReadyz(t, admin, http.StatusOK, `"store":"ok"`)
	}

	// The measure, once the store-wide gauges are back.
	var text string
	for deadline := time.Now().Add(10 * time.Second); ; {
		text = metricsText(t, admin)
		if strings.Contains(text, "\nfacturad_documents{") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(text, "\nfacturad_documents{") {
		t.Fatal("the state gauges did not come back: the measure would miss them")
	}

	// Every route has its one histogram, whatever it answered, and the
	// counters of the 2xx, 4xx and 5xx classes from the start (and no
	// other class): a class answered later adds no series, so this is the
	// size of a replica whose routes have answered every class they answer.
	hist := map[string]bool{}
	for _, m := range routeHistogram.FindAllStringSubmatch(text, -1) {
		if strings.Contains(m[1], "status=") {
			t.Errorf("a duration histogram by status class: {%s}", m[1])
		}
		hist[m[1]] = true
	}
	for _, r := range routes {
		h := r.pattern
		if !gateway.OwnLatency(h) {
			h = gateway.SharedLatencyRoute
		}
		if !hist[fmt.Sprintf(`method="%s",route="%s"`, r.method, h)] {
			t.Errorf("%s %s has no duration histogram %s: it was not called", r.method, r.pattern, h)
		}
	}
	classes := map[route][]string{}
	answered := map[string]int{} // status class → routes that answered it
	for _, m := range routeCounter.FindAllStringSubmatch(text, -1) {
		r := route{m[1], m[2]}
		classes[r] = append(classes[r], m[3])
		if m[2] != "unmatched" && m[4] != "0" {
			answered[m[3]]++
		}
	}
	for r, cs := range classes {
		if strings.Join(cs, " ") != "2xx 4xx 5xx" {
			t.Errorf("%s %s has counters for %v, want 2xx 4xx 5xx", r.method, r.pattern, cs)
		}
	}
	t.Logf("routes that answered 2xx: %d, 4xx: %d, 5xx: %d of %d", answered["2xx"], answered["4xx"], answered["5xx"], len(routes))
	if answered["4xx"] < len(routes)/2 || answered["2xx"] < 10 {
		t.Errorf("too few routes answered 2xx or 4xx: the calls did not reach them")
	}
	if db != nil && answered["5xx"] < len(routes)/2 {
		t.Errorf("%d routes answered 5xx with the store away, want at least half of %d", answered["5xx"], len(routes))
	}
	for _, want := range []string{`outcome="server_error"`, `outcome="rate_limited"`, `outcome="client_error"`} {
		if !strings.Contains(text, want) {
			t.Errorf("no tax-authority call with %s: the faults did not reach it", want)
		}
	}

	t.Logf("/metrics: %d bytes, %d lines, %d routes", len(text), strings.Count(text, "\n"), len(routes))
	if len(text) >= metricsSizeLimit {
		t.Errorf("/metrics is %d bytes, want under %d", len(text), metricsSizeLimit)
	}
}
