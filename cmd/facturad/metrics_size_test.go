package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"facturad/signer/certmint"
)

// routeSeries finds the (method, route) pairs of the HTTP series.
var routeSeries = regexp.MustCompile(`facturad_http_requests_total\{method="([A-Z]+)",route="([^"]+)"`)

// /metrics stays small however many companies the service holds: its
// labels are bounded (route patterns, status classes), and the histograms
// keep the buckets the dashboards and alerts read. 50 companies, a document
// each, then every route called, as the companies' users and as the admin.
func TestMetricsSize(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 50 companies")
	}
	_, api, admin, stop := startService(t, t.TempDir(),
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
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

	seen := map[string]bool{}
	for _, m := range routeSeries.FindAllStringSubmatch(metricsText(t, admin), -1) {
		method, route := m[1], m[2]
		if route == "unmatched" || seen[method+route] {
			continue
		}
		seen[method+route] = true
		for i, c := range companies {
			path := strings.NewReplacer("{clave}", c.clave, "{companyId}", "1", "{branchId}", "1",
				"{userId}", "1", "{id}", "1").Replace(route)
			for _, who := range []apiClient{c.user, ops} {
				who.do(method, path+"?includeData=true", "application/json", []byte(`{}`))
			}
			if i == 2 {
				break // three companies per route: the labels do not grow with them
			}
		}
	}
	if len(seen) < 10 {
		t.Fatalf("only %d routes found in /metrics", len(seen))
	}
	for _, p := range []string{"/no/such/route", "/api/nothing/v4"} {
		ops.do("GET", p, "", nil)
	}

	text := metricsText(t, admin)
	// The HTTP series grow with the routes the service serves (each one
	// called here, as the companies' users and as the admin, in every
	// status class it answers), never with the companies; everything else
	// is a fixed set.
	var perRoute, rest int
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.Contains(line, `route="`) {
			perRoute += len(line)
		} else {
			rest += len(line)
		}
	}
	t.Logf("/metrics: %d bytes, %d lines, after %d routes were called: %d bytes of HTTP series (%d a route), %d of the rest",
		len(text), strings.Count(text, "\n"), len(seen), perRoute, perRoute/len(seen), rest)
	if perRoute >= len(seen)*routeBudget {
		t.Errorf("the HTTP series take %d bytes for %d routes, want under %d a route", perRoute, len(seen), routeBudget)
	}
	if rest >= restBudget {
		t.Errorf("the series other than HTTP take %d bytes, want under %d", rest, restBudget)
	}
}

// The budgets of /metrics, a quarter above what was measured with 30
// routes (2.5 KB of HTTP series a route, 29 KB of the rest; 103 KB in
// all): the HTTP budget grows with each route added, so that a new route
// does not fail the test while a label that grows with the companies, or
// a histogram's buckets multiplied, does. (A flat 100 KB bound held until
// the received-documents routes took the service to 30.)
const (
	routeBudget = 3 << 10
	restBudget  = 36 << 10
)
