package xmlcheck

import (
	"os"
	"strings"
	"testing"
)

func TestSchemasShipped(t *testing.T) {
	for _, root := range []string{"FacturaElectronica", "NotaDebitoElectronica", "NotaCreditoElectronica",
		"TiqueteElectronico", "FacturaElectronicaCompra", "FacturaElectronicaExportacion",
		"ReciboElectronicoPago", "MensajeHacienda"} {
		if _, err := os.Stat(Schema(root)); err != nil {
			t.Errorf("schema of %s: %v", root, err)
		}
	}
}

func TestXSDRefusesInvalid(t *testing.T) {
	err := XSD(t, "FacturaElectronica", []byte(`<?xml version="1.0"?><FacturaElectronica xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/facturaElectronica"><Nada/></FacturaElectronica>`))
	if err == nil || !strings.Contains(err.Error(), "Nada") {
		t.Fatalf("an invalid document passed or the error does not say why: %v", err)
	}
}

func TestXMLSecRefusesUnsigned(t *testing.T) {
	if err := XMLSec(t, []byte(`<?xml version="1.0"?><a/>`), os.DevNull); err == nil {
		t.Fatal("an unsigned document verified")
	}
}

// ending records how Tool ended a test: the first Fatalf or Skipf, as a
// real test ends there.
type ending struct {
	testing.TB
	fatal, skip bool
}

func (e *ending) Helper() {}
func (e *ending) Fatalf(string, ...any) {
	if !e.fatal && !e.skip {
		e.fatal = true
	}
}
func (e *ending) Skipf(string, ...any) {
	if !e.fatal && !e.skip {
		e.skip = true
	}
}

// TestToolRequired: every way of saying "required" makes a missing tool
// a failure, not a skip that would let the package pass without its
// checks; a value that says neither fails even when the tool is there.
func TestToolRequired(t *testing.T) {
	present, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const missing = "facturad-no-such-tool"
	tests := []struct {
		name, require, tool string
		fatal, skip         bool
	}{
		{"error/missing, required by 1", "1", missing, true, false},
		{"error/missing, required by true", "true", missing, true, false},
		{"error/missing, required by yes", "yes", missing, true, false},
		{"ok/missing, not required", "", missing, false, true},
		{"ok/missing, not required by false", "false", missing, false, true},
		{"ok/present, required", "true", present, false, false},
		{"error/present, switch misspelt", "ture", present, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TEST_REQUIRE_SERVICES", tt.require)
			e := &ending{TB: t}
			Tool(e, tt.tool)
			if e.fatal != tt.fatal || e.skip != tt.skip {
				t.Fatalf("fatal %v skip %v, want fatal %v skip %v", e.fatal, e.skip, tt.fatal, tt.skip)
			}
		})
	}
}
