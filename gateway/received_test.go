package gateway

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/api"
)

// TestReceiveRequestReadAsWritten: the receive body as a Go program writes
// it (api.ReceiveRequest, the client's) is read whole by the decoder the
// receive call uses (hacienda.DecodeReceiveRequest, which keeps reading
// rules of its own: a mensaje given as a number, base64 with line breaks).
func TestReceiveRequestReadAsWritten(t *testing.T) {
	in := api.ReceiveRequest{
		XML: []byte("<FacturaElectronica/>"), Mensaje: "2", DetalleMensaje: "Solo una parte", CodigoActividad: "620100",
		CondicionImpuesto: "02", MontoTotalImpuestoAcreditar: "3250.13", MontoTotalDeGastoAplicable: "100.5", IDExterno: "R-1",
	}
	// Every field is set: a field added to the body must be added here.
	v := reflect.ValueOf(in)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("set %s in this test", v.Type().Field(i).Name)
		}
	}
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := hacienda.DecodeReceiveRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	a := got.Answer
	if !bytes.Equal(got.XML, in.XML) || got.IDExterno != in.IDExterno || a.Mensaje != in.Mensaje || a.DetalleMensaje != in.DetalleMensaje ||
		a.CodigoActividad != in.CodigoActividad || a.CondicionImpuesto != in.CondicionImpuesto ||
		a.MontoTotalImpuestoAcreditar.String() != in.MontoTotalImpuestoAcreditar || a.MontoTotalDeGastoAplicable.String() != in.MontoTotalDeGastoAplicable {
		t.Errorf("wrote %+v\nread %+v", in, got)
	}
}
