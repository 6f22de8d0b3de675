package recepcion_test

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/signer"
	"facturad/signer/certmint"
)

// issuer is the fictitious company the test documents come from.
const (
	issuerTipo   = "02"
	issuerNumero = "3101123456"
)

var t0 = time.Date(2026, 11, 21, 10, 30, 0, 0, hacienda.CostaRica)

// claveFor builds a clave consistent with document number n of the issuer,
// dated t0.
func claveFor(n int) (clave, consecutivo string) {
	consecutivo = fmt.Sprintf("0010000101%010d", n)
	clave = "506" + t0.Format("020106") + "00" + issuerNumero + consecutivo + "1" + fmt.Sprintf("%08d", n%100000000)
	return clave, consecutivo
}

// unsignedDoc is a small FacturaElectronica that carries the fields the
// tax authority cross-checks (it is not a complete v4.4 document).
func unsignedDoc(n int) (string, []byte) {
	clave, consecutivo := claveFor(n)
	return clave, []byte(`<?xml version="1.0" encoding="UTF-8"?>` +
		`<FacturaElectronica xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/facturaElectronica">` +
		`<Clave>` + clave + `</Clave>` +
		`<ProveedorSistemas>3101123456</ProveedorSistemas>` +
		`<CodigoActividadEmisor>620100</CodigoActividadEmisor>` +
		`<NumeroConsecutivo>` + consecutivo + `</NumeroConsecutivo>` +
		`<FechaEmision>` + t0.Format(time.RFC3339) + `</FechaEmision>` +
		`<Emisor><Nombre>Compañía de Pruebas &amp; Hijos S.A.</Nombre><Identificacion><Tipo>` + issuerTipo + `</Tipo><Numero>` + issuerNumero + `</Numero></Identificacion></Emisor>` +
		`<Receptor><Nombre>Cliente de Pruebas</Nombre><Identificacion><Tipo>01</Tipo><Numero>112340567</Numero></Identificacion></Receptor>` +
		`<ResumenFactura><TotalImpuesto>130.00000</TotalImpuesto><TotalComprobante>1130.00000</TotalComprobante></ResumenFactura>` +
		`</FacturaElectronica>`)
}

var issuerCert struct {
	once  sync.Once
	m     *certmint.Minted
	err   error
	chain []*x509.Certificate
}

// realDoc is document number n of the issuer as the service builds it: a
// complete v4.4 Factura Electrónica (two lines, computed with
// hacienda.Calculate, written with hacienda.MarshalXML). mutate, when not
// nil, changes the computed document before it is written.
func realDoc(t testing.TB, n int, mutate func(*hacienda.Document)) (string, []byte) {
	t.Helper()
	clave, consecutivo := claveFor(n)
	price := hacienda.MustAmount("1000")
	d := &hacienda.Document{
		Type: hacienda.TypeFE, Clave: clave, ProveedorSistemas: issuerNumero, CodigoActividadEmisor: "620100",
		NumeroConsecutivo: consecutivo, FechaEmision: t0,
		Emisor: hacienda.Party{
			Nombre:            "Compañía de Pruebas & Hijos S.A.",
			Identificacion:    hacienda.Identificacion{Tipo: issuerTipo, Numero: issuerNumero},
			Ubicacion:         &hacienda.Ubicacion{Provincia: "1", Canton: "01", Distrito: "01", OtrasSenas: "Frente al parque central"},
			CorreoElectronico: []string{"facturas@example.com"},
		},
		Receptor: &hacienda.Party{
			Nombre:         "Cliente de Pruebas",
			Identificacion: hacienda.Identificacion{Tipo: "01", Numero: "112340567"},
		},
		CondicionVenta: hacienda.CondicionContado,
		DetalleServicio: []hacienda.LineaDetalle{
			{NumeroLinea: 1, CodigoCABYS: "2392000000000", Cantidad: hacienda.MustAmount("1"), UnidadMedida: "Unid",
				Detalle: "Mercancía de prueba", PrecioUnitario: price,
				Impuesto: []hacienda.Impuesto{{Codigo: hacienda.ImpuestoIVA, CodigoTarifaIVA: "08"}}},
			{NumeroLinea: 2, CodigoCABYS: "8314100000000", Cantidad: hacienda.MustAmount("2"), UnidadMedida: "Sp",
				Detalle: "Servicio de prueba", PrecioUnitario: hacienda.MustAmount("250.5"),
				Impuesto: []hacienda.Impuesto{{Codigo: hacienda.ImpuestoIVA, CodigoTarifaIVA: "04"}}},
		},
		ResumenFactura: hacienda.ResumenFactura{
			CodigoTipoMoneda: hacienda.CodigoTipoMoneda{CodigoMoneda: "CRC", TipoCambio: hacienda.MustAmount("1")},
			MedioPago:        []hacienda.MedioPago{{TipoMedioPago: hacienda.MedioPagoEfectivo}},
		},
	}
	if err := hacienda.Calculate(d); err != nil {
		t.Fatalf("calculate: %v", err)
	}
	if mutate != nil {
		mutate(d)
	}
	xml, err := hacienda.MarshalXML(d)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return clave, sign(t, xml)
}

// sign signs xml with a minted certificate of the issuer.
func sign(t testing.TB, xml []byte) []byte {
	t.Helper()
	issuerCert.once.Do(func() {
		issuerCert.m, issuerCert.err = certmint.MintCertificate(certmint.Options{
			TipoIdentificacion: issuerTipo, Identificacion: issuerNumero, Name: "COMPANIA DE PRUEBAS",
			Key: certmint.TestKey(1), PIN: "1234",
		})
		if issuerCert.err == nil {
			issuerCert.chain = []*x509.Certificate{issuerCert.m.Leaf, issuerCert.m.CA.Cert}
		}
	})
	if issuerCert.err != nil {
		t.Fatalf("mint: %v", issuerCert.err)
	}
	signed, err := signer.Sign(xml, issuerCert.m.Key, issuerCert.chain, signer.PolicyV44)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return signed
}

func submission(clave string, xml []byte) recepcion.Submission {
	return recepcion.Submission{
		Clave:     clave,
		Fecha:     t0,
		Emisor:    recepcion.Party{TipoIdentificacion: issuerTipo, NumeroIdentificacion: issuerNumero},
		Receptor:  &recepcion.Party{TipoIdentificacion: "01", NumeroIdentificacion: "112340567"},
		SignedXML: xml,
	}
}

var creds = recepcion.Credentials{
	CompanyID: 7,
	Username:  "cpj-3-101-123456@stag.comprobanteselectronicos.go.cr",
	Password:  []byte(`a$b/c@d)e;f]g+h|i&j=k%l`),
}

// bundle is a sandbox and a client pointed at it, sharing a manual clock.
type bundle struct {
	sb     *sandbox.TestServer
	client *recepcion.Client
	clock  *sandbox.ManualClock
}

func setup(t testing.TB, so sandbox.Options, co recepcion.Options) *bundle {
	t.Helper()
	clock := sandbox.NewManualClock(t0)
	if so.Clock == nil {
		so.Clock = clock
	}
	if so.Logger == nil {
		so.Logger = quiet
	}
	sb := sandbox.NewTestServer(t, so)
	co.Environment = recepcion.Sandbox
	if co.Logger == nil {
		co.Logger = quiet
	}
	co.APIURL, co.TokenURL = sb.APIURL, sb.TokenURL
	if co.Clock == nil {
		co.Clock = clock
	}
	c, err := recepcion.New(co)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &bundle{sb: sb, client: c, clock: clock}
}

// noChecks disables the delegated checks, for tests about the protocol
// with unsigned documents.
var noChecks = &sandbox.Checks{}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

var quiet = slog.New(slog.DiscardHandler)

// retryable is the client's own classification of err, under Judge.
func retryable(err error) bool {
	var ae *recepcion.APIError
	if errors.As(err, &ae) {
		return ae.Retryable
	}
	var te *recepcion.TransportError
	if errors.As(err, &te) {
		return te.Retryable
	}
	return false
}

// maybeReceived is what Judge reports as MaybeReceived.
func maybeReceived(err error) bool { return recepcion.Judge(err).MaybeReceived }
