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
	t.Logf("/metrics: %d bytes, %d lines, after %d routes were called", len(text), strings.Count(text, "\n"), len(seen))
	// Each route called costs about 2.5 KB per status class (a counter
	// and a histogram of metrics.HTTPBuckets); the bound was 100 KiB for
	// 29 routes and grew with the 5 delivery routes and the delivery
	// metrics (issue 14). What it guards is that nothing grows with the
	// companies.
	if len(text) >= 128<<10 {
		t.Errorf("/metrics is %d bytes, want under %d", len(text), 128<<10)
	}
}
