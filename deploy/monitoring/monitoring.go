// Package monitoring holds facturad's Prometheus alerting rules and Grafana
// dashboard, embedded, and reads the PromQL queries out of them, so that the
// tests can check the rules with promtool, the dashboard's variables, and
// that every metric a query uses is one the service exports.
//
// The rules file is read line by line, not with a YAML library: a rule's
// expr is either on the expr line or a block scalar ("expr: |") indented
// under it, which is how alerts.yaml is written.
package monitoring

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Rules is alerts.yaml, the alerting rules.
//
//go:embed alerts.yaml
var Rules []byte

// Dashboard is grafana-dashboard.json, the Grafana dashboard.
//
//go:embed grafana-dashboard.json
var Dashboard []byte

// Query is one PromQL expression and where it comes from.
type Query struct {
	// Source names the rule ("rule FacturadDown") or the dashboard panel
	// and target ("panel \"Refused send calls\" A").
	Source string
	Expr   string
}

// RuleQueries returns the expr of every alerting rule in Rules, in file
// order, with the alert's name as Source.
func RuleQueries() ([]Query, error) {
	lines := strings.Split(string(Rules), "\n")
	var out []Query
	alert := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(trimmed, "- alert:"); ok {
			alert = strings.TrimSpace(name)
			continue
		}
		rest, ok := strings.CutPrefix(trimmed, "expr:")
		if !ok {
			continue
		}
		if alert == "" {
			return nil, fmt.Errorf("alerts.yaml line %d: expr outside an alerting rule", i+1)
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		rest = strings.TrimSpace(rest)
		var parts []string
		if rest != "|" && rest != ">" {
			parts = append(parts, rest)
		}
		// Continuation lines are indented deeper than the expr key.
		for i+1 < len(lines) {
			next := lines[i+1]
			if strings.TrimSpace(next) != "" && len(next)-len(strings.TrimLeft(next, " ")) <= indent {
				break
			}
			parts = append(parts, strings.TrimSpace(next))
			i++
		}
		expr := strings.TrimSpace(strings.Join(parts, " "))
		if expr == "" {
			return nil, fmt.Errorf("alerts.yaml line %d: rule %s has an empty expr", i+1, alert)
		}
		out = append(out, Query{Source: "rule " + alert, Expr: expr})
		alert = ""
	}
	return out, nil
}

// DashboardModel is the part of a Grafana dashboard the checks read.
type DashboardModel struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []Variable `json:"list"`
	} `json:"templating"`
	Panels []Panel `json:"panels"`
}

// Variable is a dashboard template variable.
type Variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource json.RawMessage `json:"datasource"`
	Multi      bool            `json:"multi"`
	IncludeAll bool            `json:"includeAll"`
	AllValue   string          `json:"allValue"`
}

// labelValues is a label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// LabelValues returns the series selector and the label of a query
// variable's label_values(selector, label); ok is false for any other
// variable or query. The query is a string or an object with a query
// string, as Grafana versions write it.
func (v Variable) LabelValues() (selector, label string, ok bool) {
	var q string
	if err := json.Unmarshal(v.Query, &q); err != nil {
		var obj struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &obj); err != nil {
			return "", "", false
		}
		q = obj.Query
	}
	m := labelValues.FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return "", "", false
	}
	return strings.TrimSpace(m[1]), m[2], true
}

// Panel is a dashboard panel; rows hold their collapsed panels.
type Panel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	Targets    []Target        `json:"targets"`
	Panels     []Panel         `json:"panels"`
}

// Target is one query of a panel.
type Target struct {
	RefID string `json:"refId"`
	Expr  string `json:"expr"`
}

// ParseDashboard decodes Dashboard.
func ParseDashboard() (*DashboardModel, error) {
	var d DashboardModel
	if err := json.Unmarshal(Dashboard, &d); err != nil {
		return nil, fmt.Errorf("decode grafana-dashboard.json: %w", err)
	}
	return &d, nil
}

// AllPanels returns the panels with the panels of rows flattened in.
func (d *DashboardModel) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// DashboardQueries returns the series selector of every label_values
// variable, then the expr of every panel target.
func DashboardQueries() ([]Query, error) {
	d, err := ParseDashboard()
	if err != nil {
		return nil, err
	}
	var out []Query
	for _, v := range d.Templating.List {
		if sel, _, ok := v.LabelValues(); ok {
			out = append(out, Query{Source: "variable " + v.Name, Expr: sel})
		}
	}
	for _, p := range d.AllPanels() {
		for _, t := range p.Targets {
			out = append(out, Query{Source: fmt.Sprintf("panel %q %s", p.Title, t.RefID), Expr: t.Expr})
		}
	}
	return out, nil
}

// Queries returns the queries of the rules and then of the dashboard.
func Queries() ([]Query, error) {
	rules, err := RuleQueries()
	if err != nil {
		return nil, err
	}
	panels, err := DashboardQueries()
	if err != nil {
		return nil, err
	}
	return append(rules, panels...), nil
}

var (
	// quoted strings, label matchers and range or subquery selectors: none
	// holds a metric name.
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promBraces   = regexp.MustCompile(`\{[^{}]*\}`)
	promBrackets = regexp.MustCompile(`\[[^\[\]]*\]`)
	// label lists of by, without, on, ignoring, group_left, group_right.
	promLabelLists = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promOffset     = regexp.MustCompile(`\boffset\s+-?[0-9a-zA-Z_$]+`)
	promTokens     = regexp.MustCompile(`[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|[a-zA-Z_:][a-zA-Z0-9_:]*|\S`)
)

// promKeywords are words of PromQL that are no metric names: aggregation
// operators (which may be followed by a "by" clause before their
// parenthesis), set and comparison keywords and literals.
var promKeywords = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"inf": true, "nan": true, "Inf": true, "NaN": true,
}

// MetricNames returns the metric names expr selects, sorted and without
// repeats; functions and keywords are left out.
func MetricNames(expr string) []string {
	s := promStrings.ReplaceAllString(expr, " ")
	for {
		next := promBraces.ReplaceAllString(s, " ")
		next = promBrackets.ReplaceAllString(next, " ")
		if next == s {
			break
		}
		s = next
	}
	s = promLabelLists.ReplaceAllString(s, " ")
	s = promOffset.ReplaceAllString(s, " ")
	tokens := promTokens.FindAllString(s, -1)
	seen := map[string]bool{}
	var out []string
	for i, tok := range tokens {
		c := tok[0]
		if !(c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') || promKeywords[tok] {
			continue
		}
		if i+1 < len(tokens) && tokens[i+1] == "(" {
			continue // a function
		}
		if i > 0 && tokens[i-1] == "$" {
			continue // a Grafana variable
		}
		if !seen[tok] {
			seen[tok] = true
			out = append(out, tok)
		}
	}
	sort.Strings(out)
	return out
}
