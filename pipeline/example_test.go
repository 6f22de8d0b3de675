package pipeline_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/gateway"
	"facturad/gateway/client"
	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/pipeline"
	"facturad/signer"
	"facturad/signer/certmint"
	"facturad/tenant"
	"facturad/tenant/certopen"
	"facturad/tenant/printed"
	"facturad/tenant/seal"
	"facturad/tenant/sqlite"
)

// Example_wiring shows how the service puts the pipeline together: the
// store, the tenant service (issuer data, credentials, authorization, and
// the signer cache's certificate source), the signer cache, the
// tax-authority client (here against the sandbox, which stands in for the
// tax authority), and the gateway's document routes. A company's API user
// then sends an invoice through the gateway, and the pipeline signs it,
// submits it and reads the tax authority's verdict.
func Example_wiring() {
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	registry := prometheus.NewRegistry()

	dir, err := os.MkdirTemp("", "facturad-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "facturad.db"), sqlite.Options{})
	if err != nil {
		panic(err)
	}
	masterKey := make([]byte, 32) // from configuration
	sealer, err := seal.New(masterKey)
	if err != nil {
		panic(err)
	}
	tenants, err := tenant.NewService(tenant.ServiceOptions{
		Store: store, Sealer: sealer, Certificates: certopen.Opener{}, Logger: logger,
		Passwords: tenant.Argon2id{Memory: 64, Time: 1, Threads: 1}, // cheap, for the example only
	})
	if err != nil {
		panic(err)
	}
	certs, err := signer.NewCache(signer.CacheOptions{Source: tenants})
	if err != nil {
		panic(err)
	}

	// The sandbox signs its answers with a certificate of its own: the
	// pipeline trusts its root, as the service trusts the national PKI's.
	answers, err := sandbox.DefaultAnswerSigner()
	if err != nil {
		panic(err)
	}
	authority, err := sandbox.Listen("127.0.0.1:0", sandbox.Options{AnswerSigner: answers, Logger: logger})
	if err != nil {
		panic(err)
	}
	hc, err := recepcion.New(recepcion.Options{
		APIURL: authority.APIURL(), TokenURL: authority.TokenURL(), Logger: logger, Registerer: registry,
	})
	if err != nil {
		panic(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(answers.Root())
	p, err := pipeline.New(pipeline.Options{
		Store: store, Issuers: tenants, Signer: certs, Submitter: hc, AnswerRoots: roots,
		Logger: logger, Registerer: registry,
	})
	if err != nil {
		panic(err)
	}
	if err := p.Start(ctx); err != nil {
		panic(err)
	}
	srv, err := gateway.New(gateway.Options{
		Tenants: tenants, Routes: gateway.DocumentRoutes(p, nil, printed.Printer{}), Logger: logger, Registerer: registry,
	})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = srv.Serve(ln) }()

	// A company with its certificate (a test one here) and its first API
	// user, created by an admin.
	created, err := tenants.CreateCompany(ctx, tenant.Principal{UserID: 1, Username: "admin", Role: tenant.RoleAdmin}, company("3101123456"))
	if err != nil {
		panic(err)
	}
	cr := created.Credentials
	api, err := client.New("http://"+ln.Addr().String(), client.WithCredentials(cr.Usuario, cr.Contrasena, cr.APIToken))
	if err != nil {
		panic(err)
	}
	doc, err := api.Send(ctx, invoice("FAC-0001"), client.SendOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("sent:", doc.Estado, doc.EstadoHumanizado)
	final, err := api.WaitFinal(ctx, doc.Clave, 50*time.Millisecond)
	if err != nil {
		panic(err)
	}
	fmt.Println("verdict:", final.Estado, final.EstadoHumanizado)

	// Shutdown, in reverse order: the gateway stops taking requests, then
	// the pipeline finishes what it admitted (or is cut after a grace
	// period), then the tax-authority client, and the store closes.
	shut, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	if err := p.Stop(shut); err != nil {
		_ = p.StopAndCancel(context.Background())
	}
	_ = hc.Close(shut)
	_ = authority.Close(shut)
	_ = store.Close()
	// Output:
	// sent: 04 Sent
	// verdict: 01 Accepted
}

// company is a company's create form with a certificate minted for its
// identification (a real company uploads its own .p12).
func company(id string) tenant.CompanyInput {
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: id, Name: "EMPRESA " + id, PIN: "1234", Key: certmint.TestKey(1),
	})
	if err != nil {
		panic(err)
	}
	return tenant.CompanyInput{
		TipoIdentificacion: "02", Identificacion: id, RazonSocial: "Empresa de Ejemplo S.A.",
		ActividadComercial: "620100", UsuarioHacienda: "cpj-3-101-" + id[4:] + "@stag.comprobanteselectronicos.go.cr",
		ContrasenaHacienda: tenant.Secret("clave-de-hacienda"), TipoCliente: "Normal", RazonComercial: "Ejemplo",
		Provincia: "1", Canton: "01", Distrito: "01", OtrasSenas: "Avenida central, frente al parque",
		CodPais: "506", Telefono: "22223333", CorreoElectronico: "facturas@example.com",
		Sucursal: "001", FacturacionElectronica: true, Certificate: m.P12, CertificatePIN: tenant.Secret("1234"),
	}
}

// invoice is a Factura Electrónica of one line: three items at 1,250.50
// colones with 13% IVA, paid in cash.
func invoice(idExterno string) *hacienda.SendDocumentRequest {
	price, err := hacienda.ParseAmount("1250.50")
	if err != nil {
		panic(err)
	}
	return &hacienda.SendDocumentRequest{
		IDExterno: idExterno, TipoDocumento: "01", CondicionVenta: "01",
		Receptor: &hacienda.ReceptorRequest{
			Nombre: "Cliente de ejemplo", Identificacion: &hacienda.IdentificacionRequest{Tipo: "01", Numero: "109870654"},
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
