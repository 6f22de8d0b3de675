package docview

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"facturad/tenant"
)

func TestNewDocument(t *testing.T) {
	d := tenant.Document{
		IDExterno:   "F-1",
		Consecutivo: "00100001010000000042",
		Clave:       "506x",
		Submission:  tenant.Submission{Phase: tenant.PhaseFor(tenant.StateSent), Estado: tenant.StateSent, SignedXML: []byte("<a/>"), ResponseXML: []byte("<b/>"), LastError: "esperando"},
	}
	tests := []struct {
		name            string
		estado          tenant.State
		withXML, withRX bool
		wantEstado      string
		wantXML, wantRX bool
	}{
		{"ok/stored state, no XML", "", false, false, "04", false, false},
		{"ok/state overridden", tenant.StateAccepted, false, false, "01", false, false},
		{"ok/both XMLs asked for", "", true, true, "04", true, true},
		{"ok/only the answer asked for", "", false, true, "04", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewDocument(d, tt.estado, tt.withXML, tt.withRX)
			if a.Estado != tt.wantEstado || a.EstadoHumanizado != tenant.State(tt.wantEstado).Humanized() {
				t.Errorf("estado %q %q, want %q", a.Estado, a.EstadoHumanizado, tt.wantEstado)
			}
			if (a.XML != nil) != tt.wantXML || (a.XMLRespuesta != nil) != tt.wantRX {
				t.Fatalf("xml %v, xml_respuesta %v; want %v, %v", a.XML, a.XMLRespuesta, tt.wantXML, tt.wantRX)
			}
			if a.XML != nil {
				b, _ := json.Marshal(a)
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				if m["xml"] != base64.StdEncoding.EncodeToString(d.SignedXML) {
					t.Errorf("xml %q is not the signed XML in base64", m["xml"])
				}
			}
			if a.NumeroDocumento != "0000000042" || a.DetalleMensajeHacienda == nil || a.MensajeAPI != "" {
				t.Errorf("numero %q, detalle %v, mensaje_api %q", a.NumeroDocumento, a.DetalleMensajeHacienda, a.MensajeAPI)
			}
		})
	}
	if a := StoredDocument(d); a.MensajeAPI != "esperando" || a.XML != nil {
		t.Errorf("stored document: mensaje_api %q, xml %v", a.MensajeAPI, a.XML)
	}
	b, _ := json.Marshal(NewDocument(tenant.Document{Numero: 7}, "", true, true))
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m["xml"] != nil || m["xml_respuesta"] != nil || m["numero_documento"] != "0000000007" {
		t.Errorf("a document without XML reserved as number 7: %s", b)
	}
}

func TestNewReceived(t *testing.T) {
	r := tenant.ReceivedDocument{
		Clave:            "506y",
		TotalComprobante: "1130.00",
		Submission:       tenant.Submission{Phase: tenant.PhaseFor(tenant.StatePending), Estado: tenant.StatePending, LastError: "x"},
	}
	a := NewReceived(r, tenant.StateNotSentYet)
	if a.Estado != "05" || a.MontoTotalImpuesto != nil || a.TotalFactura != "1130.00" || a.DetalleMensajeHacienda == nil ||
		a.FechaEmision != "0001-01-01T00:00:00" || a.MensajeAPI != "" {
		t.Errorf("received without tax: %+v", a)
	}
	if a.PoliticaFirmaProveedor != "" {
		t.Errorf("received without a signature policy: politicaFirmaProveedor %q, want empty", a.PoliticaFirmaProveedor)
	}
	r.TotalImpuesto = "130.00"
	r.FirmaPolitica = "https://cdn.comprobanteselectronicos.go.cr/xml-schemas/Resoluci%C3%B3n_General.pdf"
	if a := StoredReceived(r); a.Estado != "00" || a.MontoTotalImpuesto == nil || *a.MontoTotalImpuesto != "130.00" || a.MensajeAPI != "x" ||
		a.PoliticaFirmaProveedor != r.FirmaPolitica {
		t.Errorf("stored received: %+v", a)
	}
}
