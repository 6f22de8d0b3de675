package client_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"facturad/gateway/client"
	"facturad/hacienda"
	"facturad/signer/certmint"
)

// companyForm is a company's create form with a test certificate minted
// for its identification (a real company uploads its own .p12).
func companyForm(ident string) client.CompanyForm {
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		panic(err)
	}
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: ident, Name: "EMPRESA " + ident, PIN: "1234",
		CA: ca, Key: certmint.TestKey(0),
	})
	if err != nil {
		panic(err)
	}
	return client.CompanyForm{
		TipoIdentificacion: "02", Identificacion: ident, RazonSocial: "Empresa " + ident + " S.A.",
		ActividadComercial: "620100", TipoCliente: "01", RazonComercial: "Empresa " + ident,
		UsuarioHacienda: "cpj-" + ident + "@stag.comprobanteselectronicos.go.cr", ContrasenaHacienda: "clave-de-hacienda",
		Provincia: "1", Canton: "01", Distrito: "01", OtrasSenas: "Avenida central", CodPais: "506",
		Telefono: "22223333", CorreoElectronico: "facturas@example.com",
		FacturacionElectronica: true, Certificado: m.P12, CertificadoNombre: ident + ".p12", Clave: "1234",
	}
}

// nextIdent hands out company identifications (cédulas jurídicas) that no
// other example or test of this run uses.
var identSeq atomic.Int64

func nextIdent() string { return fmt.Sprintf("3101%06d", 100000+identSeq.Add(1)) }

// invoice is a Factura Electrónica of one line: three items at 1,250.50
// colones with 13% IVA, paid in cash.
func invoice(idExterno string) *hacienda.SendDocumentRequest {
	price, err := hacienda.ParseAmount("1250.50")
	if err != nil {
		panic(err)
	}
	return &hacienda.SendDocumentRequest{
		IDExterno:      idExterno,
		TipoDocumento:  "01",
		CondicionVenta: "01",
		Receptor: &hacienda.ReceptorRequest{
			Nombre:            "Cliente de ejemplo",
			Identificacion:    &hacienda.IdentificacionRequest{Tipo: "01", Numero: "109870654"},
			CorreoElectronico: "cliente@example.com",
		},
		DocumentBody: hacienda.DocumentBody{
			DetalleServicio: []hacienda.LineaDetalle{{
				NumeroLinea: 1, CodigoCABYS: "2392000000000", Cantidad: hacienda.AmountFromInt(3),
				UnidadMedida: "Unid", Detalle: "Mercancía de ejemplo", PrecioUnitario: price,
				Impuesto: []hacienda.Impuesto{{Codigo: "01", CodigoTarifaIVA: "08", Tarifa: hacienda.AmountFromInt(13)}},
			}},
			ResumenFactura: hacienda.ResumenFactura{
				CodigoTipoMoneda: hacienda.CodigoTipoMoneda{CodigoMoneda: "CRC", TipoCambio: hacienda.AmountFromInt(1)},
				MedioPago:        []hacienda.MedioPago{{TipoMedioPago: "01"}},
			},
		},
	}
}

// An admin creates a company; its first API user sends an invoice and
// waits for the tax authority's verdict.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	admin, err := client.New(serviceURL, client.WithCredentials(adminUser, adminPass, adminToken))
	if err != nil {
		panic(err)
	}
	created, err := admin.CreateCompany(ctx, companyForm(nextIdent()))
	if err != nil {
		panic(err)
	}
	// The company's first API user: its credentials are shown only in
	// this answer, so keep them.
	branch := admin.As(created.Credentials())

	doc, err := branch.Send(ctx, invoice("FAC-0001"), client.SendOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("sent:", doc.Estado, doc.EstadoHumanizado, "clave of", len(doc.Clave), "digits")

	final, err := branch.WaitFinal(ctx, doc.Clave, 100*time.Millisecond)
	if err != nil {
		panic(err)
	}
	fmt.Println("verdict:", final.Estado, final.EstadoHumanizado)
	// Output:
	// sent: 04 Sent clave of 50 digits
	// verdict: 01 Accepted
}

// Sending the same request again, with the same id_externo, issues
// nothing new: the answer is the document already issued.
func ExampleClient_Send_idempotent() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, _ := client.New(serviceURL, client.WithCredentials(adminUser, adminPass, adminToken))
	created, err := admin.CreateCompany(ctx, companyForm(nextIdent()))
	if err != nil {
		panic(err)
	}
	branch := admin.As(created.Credentials())

	first, err := branch.Send(ctx, invoice("FAC-0002"), client.SendOptions{})
	if err != nil {
		panic(err)
	}
	again, err := branch.Send(ctx, invoice("FAC-0002"), client.SendOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("same clave:", again.Clave == first.Clave, "same consecutivo:", again.Consecutivo == first.Consecutivo)

	// The same id_externo with another body is refused on id_externo.
	other := invoice("FAC-0002")
	other.DetalleServicio[0].Cantidad = hacienda.AmountFromInt(4)
	_, err = branch.Send(ctx, other, client.SendOptions{})
	var ae *client.Error
	if errors.As(err, &ae) && errors.Is(err, client.ErrValidation) {
		fmt.Println("refused:", ae.StatusCode, "on", len(ae.Fields), "field:", ae.Fields["id_externo"] != nil)
	}
	// Output:
	// same clave: true same consecutivo: true
	// refused: 400 on 1 field: true
}

// The calculate call computes the amounts of a document body without
// issuing anything.
func ExampleClient_Calculate() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := client.New(serviceURL, client.WithCredentials(adminUser, adminPass, adminToken))

	body := invoice("").DocumentBody
	res, err := c.Calculate(ctx, &hacienda.CalculateRequest{TipoDocumento: "01", DocumentBody: body})
	if err != nil {
		panic(err)
	}
	line := res.DetalleServicio[0]
	fmt.Println("line:", line.MontoTotal, "IVA", line.Impuesto[0].Monto, "total", line.MontoTotalLinea)
	fmt.Println("document total:", res.ResumenFactura.TotalComprobante)
	// Output:
	// line: 3751.5 IVA 487.695 total 4239.195
	// document total: 4239.195
}

// Error answers are *client.Error values: errors.Is tells the kind,
// errors.As gives the status, message and offending fields.
func ExampleError() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, _ := client.New(serviceURL, client.WithCredentials(adminUser, adminPass, adminToken))

	_, err := admin.GetCompany(ctx, 999999)
	fmt.Println("unknown company, not found:", errors.Is(err, client.ErrNotFound))

	stranger, _ := client.New(serviceURL, client.WithCredentials("nobody", "wrong-password", "wrong-token"))
	_, err = stranger.SearchCompanies(ctx, "")
	fmt.Println("wrong credentials, unauthorized:", errors.Is(err, client.ErrUnauthorized))

	bad := invoice("")
	bad.DetalleServicio[0].Cantidad = hacienda.AmountFromInt(0)
	_, err = admin.Calculate(ctx, &hacienda.CalculateRequest{DocumentBody: bad.DocumentBody})
	var ae *client.Error
	if errors.As(err, &ae) {
		for field, msgs := range ae.Fields {
			fmt.Println(ae.StatusCode, field+":", msgs[0])
		}
	}
	// Output:
	// unknown company, not found: true
	// wrong credentials, unauthorized: true
	// 400 detalleServicio[0].cantidad: must be greater than 0
}
