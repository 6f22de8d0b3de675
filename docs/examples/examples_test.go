package examples

import (
	"slices"
	"strings"
	"testing"
)

func TestAllPutsNeedsFirst(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, ex := range all {
		pos[ex.Name] = i
	}
	for _, ex := range all {
		for _, n := range ex.Needs {
			if pos[n] >= pos[ex.Name] {
				t.Errorf("%s comes before %s, which it needs", ex.Name, n)
			}
		}
	}
	if nc := all[pos["nota-credito"]]; !slices.Equal(nc.Needs, []string{"factura-credito"}) {
		t.Errorf("nota-credito needs %v", nc.Needs)
	}
}

func TestFill(t *testing.T) {
	const clave = "50621112600310112345600100001010000000001100000001"
	tests := []struct {
		name, in, want string
		claves         map[string]string
		fails          bool
	}{
		{"ok/clave and date", `{"numero":"{{clave:f}}","fechaEmisionIR":"{{fecha:f}}"}`,
			`{"numero":"` + clave + `","fechaEmisionIR":"2026-11-21T00:00:00"}`, map[string]string{"f": clave}, false},
		{"ok/nothing to fill", `{"a":1}`, `{"a":1}`, nil, false},
		{"error/unknown example", `{"numero":"{{clave:g}}"}`, "", map[string]string{"f": clave}, true},
		{"error/not a clave", `{"numero":"{{clave:f}}"}`, "", map[string]string{"f": "123"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Fill([]byte(tt.in), tt.claves)
			if tt.fails {
				if err == nil {
					t.Errorf("no error: %s", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("Fill = %s, %v; want %s", got, err, tt.want)
			}
			if strings.Contains(string(got), "{{") {
				t.Errorf("a placeholder is left: %s", got)
			}
		})
	}
}
