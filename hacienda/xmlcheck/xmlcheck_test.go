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
