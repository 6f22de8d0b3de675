package monitoring

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"facturad/deploy/testenv"
	"facturad/tenant/storetest"
)

// alertNames are the alerts the rules must define, no more and no fewer:
// docs/operations.md, the dashboard's descriptions and the alert routing of
// deployments refer to them by these names.
var alertNames = []string{
	"FacturadDown", "FacturadServerErrors", "FacturadSendLatencyHigh", "FacturadOverloaded",
	"FacturadSaturated", "HaciendaUnreachable", "DocumentsNotSentPiling", "DocumentsUnsettledTooLong",
	"CertificatesExpiringVerySoon", "CertificatesExpired",
	"StateMetricsStale", "HaciendaTokenFailures", "DocumentsWaitingForCaller", "DeliveriesBacklogOld",
	"EmailsFailed", "WebhooksFailingWidely", "RegistryUnreachable", "AuditEntriesLost",
	"FacturadStoreDown", "RedisDegraded", "SMTPUnreachable",
}

// promtool returns the path of promtool, or ends the test as
// storetest.Missing says (a failure under TEST_REQUIRE_SERVICES).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		storetest.Missing(t, "promtool (Debian package prometheus)")
	}
	return p
}

func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestPromtoolCheckRules(t *testing.T) {
	runPromtool(t, "check", "rules", "alerts.yaml")
}

// TestPromtoolRuleTests runs the rule unit tests of tests/.
func TestPromtoolRuleTests(t *testing.T) {
	files, err := filepath.Glob("tests/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule tests under tests/: %v", err)
	}
	runPromtool(t, append([]string{"test", "rules"}, files...)...)
}

// TestDashboardQueriesParse has promtool parse every dashboard query, as a
// recording rule with Grafana's variables given values.
func TestDashboardQueriesParse(t *testing.T) {
	qs, err := DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	grafana := strings.NewReplacer("$__rate_interval", "5m", "$namespace", ".*", "$job", "facturad", "$instance", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range qs {
		fmt.Fprintf(&b, "      # %s\n      - record: dashboard_query_%d\n        expr: %q\n", q.Source, i, grafana.Replace(q.Expr))
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, "check", "rules", path)
}

// ruleBlocks splits alerts.yaml into one text block per alerting rule.
func ruleBlocks(t *testing.T) map[string][]string {
	t.Helper()
	blocks := map[string][]string{}
	parts := regexp.MustCompile(`(?m)^\s*- alert:`).Split(string(Rules), -1)
	for _, p := range parts[1:] {
		name, _, _ := strings.Cut(strings.TrimSpace(p), "\n")
		blocks[name] = append(blocks[name], p)
	}
	return blocks
}

func TestRulesAreTheFixedAlerts(t *testing.T) {
	blocks := ruleBlocks(t)
	var got []string
	for name := range blocks {
		got = append(got, name)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(alertNames))
	if !slices.Equal(got, want) {
		t.Errorf("alerts defined:\n got %v\nwant %v", got, want)
	}
	qs, err := RuleQueries()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range blocks {
		n += len(b)
	}
	if len(qs) != n {
		t.Errorf("read %d exprs from %d rules", len(qs), n)
	}
}

// TestRulesAnnotated checks that every rule waits (for), says how urgent it
// is, what it means, and where its runbook entry is, and that the entry
// exists in docs/operations.md.
func TestRulesAnnotated(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^### (\S+)\s*$`).FindAllStringSubmatch(string(doc), -1) {
		headings[strings.ToLower(m[1])] = true
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s+for: \d+[smh]\s*$`),
		regexp.MustCompile(`(?m)^\s+labels: \{severity: (page|warn)\}\s*$`),
		regexp.MustCompile(`(?m)^\s+summary: "[^"]+"\s*$`),
		regexp.MustCompile(`(?m)^\s+description: "[^"]{40,}"\s*$`),
	}
	runbook := regexp.MustCompile(`(?m)^\s+runbook_url: docs/operations\.md#([a-z0-9-]+)\s*$`)
	for name, blocks := range ruleBlocks(t) {
		for _, b := range blocks {
			for _, re := range want {
				if !re.MatchString(b) {
					t.Errorf("rule %s lacks %s", name, re)
				}
			}
			m := runbook.FindStringSubmatch(b)
			switch {
			case m == nil:
				t.Errorf("rule %s has no runbook_url into docs/operations.md", name)
			case m[1] != strings.ToLower(name):
				t.Errorf("rule %s: runbook anchor %q, want %q", name, m[1], strings.ToLower(name))
			case !headings[m[1]]:
				t.Errorf("rule %s: docs/operations.md has no \"### %s\" entry", name, name)
			}
		}
	}
}

// The scrape configuration docs/operations.md gives for a Prometheus
// without the operator is one promtool accepts, names the job the rules
// select, and gives the series the namespace label the rules aggregate by
// (and the pod label), as the PodMonitor does.
func TestOperationsScrapeConfig(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(scrape_configs:.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/operations.md has no scrape_configs block")
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName        string `json:"job_name"`
			RelabelConfigs []struct {
				SourceLabels []string `json:"source_labels"`
				TargetLabel  string   `json:"target_label"`
				Action       string   `json:"action"`
				Regex        string   `json:"regex"`
			} `json:"relabel_configs"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(m[1], &cfg); err != nil { // promtool judges the rest
		t.Fatalf("the scrape_configs block: %v", err)
	}
	if len(cfg.ScrapeConfigs) != 1 || cfg.ScrapeConfigs[0].JobName != "facturad" {
		t.Fatalf("scrape configs %+v, want one job named facturad", cfg.ScrapeConfigs)
	}
	targets := map[string]string{}
	kept := false
	for _, r := range cfg.ScrapeConfigs[0].RelabelConfigs {
		if r.TargetLabel != "" {
			targets[r.TargetLabel] = strings.Join(r.SourceLabels, ";")
		}
		kept = kept || (r.Action == "keep" && r.Regex == "facturad;admin")
	}
	if !kept {
		t.Error("the scrape config keeps more than the pods' admin port")
	}
	for label, source := range map[string]string{"namespace": "__meta_kubernetes_namespace", "pod": "__meta_kubernetes_pod_name"} {
		if targets[label] != source {
			t.Errorf("label %s from %q, want from %s", label, targets[label], source)
		}
	}
	// Debian's promtool is built without Kubernetes discovery: the rest of
	// the job, its relabelling above all, is checked with a static target
	// in its place.
	sd := "kubernetes_sd_configs: [{role: pod}]"
	if !bytes.Contains(m[1], []byte(sd)) {
		t.Fatalf("the scrape config does not discover pods with %s", sd)
	}
	static := bytes.Replace(m[1], []byte(sd), []byte(`static_configs: [{targets: ["127.0.0.1:9090"]}]`), 1)
	path := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(path, static, 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, "check", "config", "--syntax-only", path)
}

// TestRulesKeepDeploymentsApart checks that every rule selects the facturad
// job and aggregates by (namespace, job), so that two deployments scraped by
// one Prometheus do not mix.
func TestRulesKeepDeploymentsApart(t *testing.T) {
	qs, err := RuleQueries()
	if err != nil {
		t.Fatal(err)
	}
	aggregation := regexp.MustCompile(`\b(sum|max|min|avg|count|group)\b(\s*by\s*\([^)]*\))?`)
	for _, q := range qs {
		for _, m := range aggregation.FindAllStringSubmatch(q.Expr, -1) {
			if !regexp.MustCompile(`^\s*by\s*\(namespace, job\b`).MatchString(m[2]) {
				t.Errorf("%s: %q does not aggregate by (namespace, job, …)", q.Source, m[0])
			}
		}
		for _, name := range MetricNames(q.Expr) {
			for _, sel := range selectors(q.Expr, name) {
				if !strings.Contains(sel, `job="facturad"`) {
					t.Errorf("%s: selector %s%s does not select job=\"facturad\"", q.Source, name, sel)
				}
			}
		}
	}
}

// selectors returns the label matchers ("{…}", or "" when there are none)
// of each place expr selects the metric name.
func selectors(expr, name string) []string {
	re := regexp.MustCompile(`(^|[^a-zA-Z0-9_:"$])` + regexp.QuoteMeta(name) + `(\{[^}]*\})?([^a-zA-Z0-9_:(]|$)`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(expr, -1) {
		out = append(out, m[2])
	}
	return out
}

// TestRuleTestsCoverEveryAlert checks that the unit tests under tests/ have,
// for every alert, a case where it fires (an alertname followed by
// exp_alerts) and one where it must not (a flow mapping with eval_time and
// alertname and no exp_alerts).
func TestRuleTestsCoverEveryAlert(t *testing.T) {
	files, err := filepath.Glob("tests/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Every alert is also judged across a restart (a replica replaced: its
	// series end, new ones start from zero; counters reset; the
	// state-reporting lease moving to another replica) and with no target
	// at all: tests named so.
	restart := regexp.MustCompile(`restart|handover|rollout`)
	judged := map[string]bool{}
	noTarget := map[string]bool{}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		var suite struct {
			Tests []struct {
				Name          string `json:"name"`
				AlertRuleTest []struct {
					Alertname string `json:"alertname"`
				} `json:"alert_rule_test"`
			} `json:"tests"`
		}
		if err := yaml.Unmarshal(b, &suite); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range suite.Tests {
			for _, a := range tc.AlertRuleTest {
				judged[a.Alertname] = judged[a.Alertname] || restart.MatchString(tc.Name)
				noTarget[a.Alertname] = noTarget[a.Alertname] || strings.Contains(tc.Name, "no target")
			}
		}
	}
	text := all.String()
	for _, name := range alertNames {
		fires := regexp.MustCompile(`alertname: ` + name + `\s*\n\s+exp_alerts:\s*\n\s+- exp_labels:`)
		quiet := regexp.MustCompile(`\{eval_time: \w+, alertname: ` + name + `\}`)
		if !fires.MatchString(text) {
			t.Errorf("no rule test where %s fires", name)
		}
		if !quiet.MatchString(text) {
			t.Errorf("no rule test where %s must stay quiet", name)
		}
		if !judged[name] {
			t.Errorf("no rule test judges %s across a restart (a test named with restart, handover or rollout)", name)
		}
		if !noTarget[name] {
			t.Errorf("no rule test judges %s with no target (a test named with no target)", name)
		}
	}
}

func TestMetricNames(t *testing.T) {
	tests := []struct {
		name, expr string
		want       []string
	}{
		{"ok/bare", `up`, []string{"up"}},
		{"ok/matchers and range", `rate(facturad_http_requests_total{status="5xx", route=~"/api/{clave}"}[5m])`, []string{"facturad_http_requests_total"}},
		{"ok/aggregation by", `sum by (namespace, job) (rate(a_total{job="x"}[$__rate_interval])) / sum without (le) (b)`, []string{"a_total", "b"}},
		{"ok/histogram", `histogram_quantile(0.99, sum by (le) (rate(x_seconds_bucket[5m]))) > 5`, []string{"x_seconds_bucket"}},
		{"ok/set operators", `a > 0 unless on (namespace, job) b or absent(c) and ignoring (x) group_left (y) d`, []string{"a", "b", "c", "d"}},
		{"ok/numbers and offset", `time() - max(ts offset 30m) > 6 * 3600 + 1e-3`, []string{"ts"}},
		{"ok/subquery and grafana variables", `deriv(max(g{instance=~"$instance"})[15m:1m]) or vector(0)`, []string{"g"}},
		{"ok/bool and keywords", `count(x == bool 1) + topk(3, y)`, []string{"x", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MetricNames(tt.expr); !slices.Equal(got, tt.want) {
				t.Errorf("MetricNames(%q) = %v, want %v", tt.expr, got, tt.want)
			}
		})
	}
}

func TestRuleQueriesReadBlockAndInlineExprs(t *testing.T) {
	qs, err := RuleQueries()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, q := range qs {
		byName[q.Source] = q.Expr
	}
	for _, tt := range []struct{ source, want string }{
		{"rule FacturadOverloaded", `sum by (namespace, job) (rate(facturad_pipeline_refused_total{job="facturad"}[5m])) > 1`},
		{"rule FacturadDown", `up{job="facturad"} == 0 or absent(up{job="facturad"})`},
	} {
		if got := byName[tt.source]; got != tt.want {
			t.Errorf("%s: expr %q, want %q", tt.source, got, tt.want)
		}
	}
}

// TestDashboardVariables checks the namespace, job and instance variables:
// from up's labels, several values at once or All.
func TestDashboardVariables(t *testing.T) {
	d, err := ParseDashboard()
	if err != nil {
		t.Fatal(err)
	}
	if d.SchemaVersion < 30 || d.UID == "" || d.Title == "" {
		t.Errorf("dashboard header: schemaVersion %d, uid %q, title %q", d.SchemaVersion, d.UID, d.Title)
	}
	vars := map[string]Variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if ds, ok := vars["datasource"]; !ok || ds.Type != "datasource" || string(ds.Query) != `"prometheus"` {
		t.Errorf("no Prometheus datasource variable: %+v", ds)
	}
	for _, name := range []string{"namespace", "job", "instance"} {
		v, ok := vars[name]
		if !ok {
			t.Errorf("no %s variable", name)
			continue
		}
		if v.Type != "query" || !v.Multi || !v.IncludeAll {
			t.Errorf("variable %s: type %q multi %v includeAll %v; want a multi-value query with All",
				name, v.Type, v.Multi, v.IncludeAll)
		}
		sel, label, ok := v.LabelValues()
		if !ok || label != name {
			t.Errorf("variable %s: query %s, want label_values(…, %s)", name, v.Query, name)
		}
		switch name {
		case "job":
			// Only facturad's jobs are offered, and All is those jobs (the
			// alternation of the options), not every job: other programs'
			// process_* and go_* series must not mix into the panels. The
			// selector is a metric only facturad exports, every replica
			// from its start (the exported-metrics test of cmd/facturad
			// checks it exports it).
			if MetricNames(sel) == nil || !strings.HasPrefix(MetricNames(sel)[0], "facturad_") || strings.Contains(sel, "$") {
				t.Errorf("variable job: selector %q, want a facturad_ metric, unfiltered", sel)
			}
			// Grafana's dashboard linter asks for .+ (All matches any
			// job): the facturad_ metrics are facturad's whatever the
			// job, and the process and Go panels keep to facturad's
			// replicas by joining on facturad_build_info
			// (TestDashboardProcessPanelsJoined).
			if v.AllValue != ".+" {
				t.Errorf("variable job: allValue %q, want .+", v.AllValue)
			}
		case "instance":
			if !regexp.MustCompile(`^up\{[^}]*job=~"\$job"[^}]*\}$`).MatchString(sel) {
				t.Errorf("variable %s: selector %q, want up{…job=~\"$job\"…}", name, sel)
			}
			if v.AllValue != ".+" {
				t.Errorf("variable instance: allValue %q, want .+ (every target has an instance)", v.AllValue)
			}
		default:
			// Within the jobs chosen, every namespace, down replicas (up
			// 0) included, and series without one (a Prometheus that
			// does not relabel it): .*.
			if !regexp.MustCompile(`^up\{[^}]*job=~"\$job"[^}]*\}$`).MatchString(sel) {
				t.Errorf("variable %s: selector %q, want up{…job=~\"$job\"…}", name, sel)
			}
			if v.AllValue != ".*" {
				t.Errorf("variable %s: allValue %q, want .*", name, v.AllValue)
			}
		}
		if !strings.Contains(string(v.Datasource), "${datasource}") {
			t.Errorf("variable %s: datasource %s, want ${datasource}", name, v.Datasource)
		}
	}
}

// TestDashboardQueriesFiltered checks that every metric every panel selects
// is filtered by the three variables, and that panels use the datasource
// variable.
func TestDashboardQueriesFiltered(t *testing.T) {
	d, err := ParseDashboard()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int]bool{}
	targets := 0
	for _, p := range d.AllPanels() {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if !strings.Contains(string(p.Datasource), "${datasource}") {
			t.Errorf("panel %q: datasource %s, want ${datasource}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			targets++
			names := MetricNames(tg.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q %s selects no metric: %s", p.Title, tg.RefID, tg.Expr)
			}
			for _, name := range names {
				for _, sel := range selectors(tg.Expr, name) {
					for _, m := range []string{`namespace=~"$namespace"`, `job=~"$job"`, `instance=~"$instance"`} {
						if !strings.Contains(sel, m) {
							t.Errorf("panel %q %s: %s%s lacks %s", p.Title, tg.RefID, name, sel, m)
						}
					}
				}
			}
		}
	}
	if targets < 20 {
		t.Errorf("only %d queries in the dashboard", targets)
	}
}

// TestDashboardPanels checks that the dashboard shows the gauges an SRE
// needs in an incident, each in some panel.
func TestDashboardPanels(t *testing.T) {
	qs, err := DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, q := range qs {
		for _, n := range MetricNames(q.Expr) {
			used[n] = true
		}
	}
	for _, n := range []string{
		"facturad_documents", "facturad_oldest_unsettled_document_age_seconds", "facturad_certificates_expiring",
		"facturad_pipeline_in_flight", "facturad_pipeline_capacity", "facturad_state_reporter",
		"facturad_pgxpool_acquired_conns", "facturad_pgxpool_max_conns", "facturad_redis_pool_timeouts_total",
		"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
		"facturad_dependency_up", "facturad_ratelimit_decisions_total", "facturad_build_info", "facturad_http_requests_total",
	} {
		if !used[n] {
			t.Errorf("no panel shows %s", n)
		}
	}
}

// TestDashboardProcessPanelsJoined checks that every query of a metric
// other programs export too (process_*, go_*) keeps to facturad's replicas
// by joining on facturad_build_info: the job variable's All matches any
// job.
func TestDashboardProcessPanelsJoined(t *testing.T) {
	qs, err := DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, q := range qs {
		for _, name := range MetricNames(q.Expr) {
			if strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "go_") {
				n++
				if !strings.Contains(q.Expr, "and on (namespace, job, instance) facturad_build_info{") {
					t.Errorf("%s: %s is not joined on facturad_build_info: %s", q.Source, name, q.Expr)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no process or Go panel found")
	}
}

// TestDashboardLinter runs Grafana's dashboard linter (strict: warnings
// fail too) on the dashboard, and on a copy that is editable to show that
// it does fail. deploy/test.sh builds the linter once and names it in
// TEST_DASHBOARD_LINTER_BIN; without it the test fails under
// TEST_REQUIRE_SERVICES and skips otherwise.
func TestDashboardLinter(t *testing.T) {
	bin := os.Getenv("TEST_DASHBOARD_LINTER_BIN")
	if bin == "" {
		testenv.MissingBuilt(t, "TEST_DASHBOARD_LINTER_BIN, Grafana's dashboard-linter,")
	}
	lint := func(path string) (string, error) {
		out, err := exec.Command(bin, "lint", "--strict", path).CombinedOutput()
		return string(out), err
	}
	out, err := lint("grafana-dashboard.json")
	if err != nil {
		t.Fatalf("dashboard-linter: %v\n%s", err, out)
	}
	if strings.Contains(out, "\u274c") || strings.Contains(out, "\u26a0") {
		t.Fatalf("dashboard-linter reported findings:\n%s", out)
	}
	editable := bytes.Replace(Dashboard, []byte(`"editable": false`), []byte(`"editable": true`), 1)
	if bytes.Equal(editable, Dashboard) {
		t.Fatal(`the dashboard has no "editable": false to flip`)
	}
	path := filepath.Join(t.TempDir(), "editable.json")
	if err := os.WriteFile(path, editable, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := lint(path); err == nil {
		t.Fatalf("dashboard-linter accepted an editable dashboard:\n%s", out)
	}
}
