package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/hacienda"
	"facturad/hacienda/pdf/pdfcheck"
	"facturad/pipeline/export"
	"facturad/signer/certmint"
)

// exportPeriod runs the accountant's month (A.15) against a running
// service: a company sends an FE, an ND, an NC and a TE through the
// service and the tax authority accepts them; it receives and accepts one
// FE of a supplier (another company of the service); then it exports the
// period with the Go client, saved to a file. The archive must hold, for
// each issued document, the signed XML and the answer as the download
// routes serve them and a PDF showing its clave; for the received one,
// the supplier's XML, the company's message and the answer to it, and a
// PDF; nothing else but the index, last, with one line per clave that
// names those files.
func exportPeriod(t *testing.T, api string) {
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	const sellerID, supplierID = "3101888001", "3101888002"
	seller, sellerCompany := createCompanyWith(t, admin, ca, sellerID, certmint.Options{}, nil)
	supplier := createCompany(t, admin, ca, supplierID)
	cl, err := client.New(seller.base, client.WithCredentials(seller.user, seller.pass, seller.token), client.WithHTTPClient(checkedHTTP(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	desde := time.Now().Add(-time.Minute)

	// Issued: FE, ND, NC, TE, the notes referring to the FE.
	var issued []string
	tipos := map[string]string{}
	for i, body := range sendRequests(t, "exportar")[:4] {
		if len(issued) > 0 {
			body = referTo(body, issued[0])
		}
		var sent document
		seller.json("POST", "/api/documents/v4", body, 200, &sent)
		if checked := seller.checkUntilVerdict(sent.Clave, ""); checked.Estado != "01" {
			t.Fatalf("%s: %+v", hacienda.DocumentTypes[i], checked)
		}
		issued = append(issued, sent.Clave)
		tipos[sent.Clave] = string(hacienda.DocumentTypes[i])
	}

	// Received: the supplier's FE, accepted with mensaje 1.
	supplierXML := issueTo(t, supplier, sellerID, "exportar-proveedor")
	rec, err := cl.Receive(ctx, &client.ReceiveRequest{XML: supplierXML, Mensaje: client.MensajeAceptado, IDExterno: "exportar-recibido",
		CondicionImpuesto: "01", MontoTotalImpuestoAcreditar: "3250.13"})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if final, err := cl.WaitReceivedFinal(ctx, rec.Clave, 100*time.Millisecond); err != nil || final.Estado != client.EstadoAccepted {
		t.Fatalf("the message's verdict: %+v %v", final, err)
	}

	body, err := cl.Export(ctx, sellerCompany, desde, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	path := filepath.Join(t.TempDir(), "export.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(f, body)
	if cerr := body.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("export body: %v", err)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("the export is not a whole ZIP: %v", err)
	}
	defer zr.Close()
	files := map[string][]byte{}
	var names []string
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc) // checks the CRC
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", zf.Name, err)
		}
		files[zf.Name] = b
		names = append(names, zf.Name)
	}

	// Every file, against what the service serves for it.
	want := map[string][]byte{}
	for _, c := range issued {
		xml, err := cl.SignedXML(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		answer, err := cl.ResponseXML(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		want["emitidos/"+c+".xml"], want["emitidos/"+c+"-respuesta.xml"], want["emitidos/"+c+".pdf"] = xml, answer, nil
	}
	message, err := cl.ReceivedMessageXML(ctx, rec.Clave)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := cl.ReceivedResponseXML(ctx, rec.Clave)
	if err != nil {
		t.Fatal(err)
	}
	r := "recibidos/" + rec.Clave
	want[r+".xml"], want[r+"-mensaje.xml"], want[r+"-respuesta.xml"], want[r+".pdf"] = supplierXML, message, answer, nil
	want[export.IndexName] = nil
	if len(names) != len(want) || names[len(names)-1] != export.IndexName {
		t.Fatalf("entries %v, want %d with the index last", names, len(want))
	}
	for name, w := range want {
		got, ok := files[name]
		switch {
		case !ok:
			t.Errorf("%s is not in the archive", name)
		case strings.HasSuffix(name, ".pdf"):
			clave := strings.TrimSuffix(name[strings.Index(name, "/")+1:], ".pdf")
			if !bytes.HasPrefix(got, []byte("%PDF-")) {
				t.Errorf("%s is not a PDF", name)
			} else if text := strings.Join(strings.Fields(pdfcheck.Text(t, got)), ""); !strings.Contains(text, clave) {
				t.Errorf("%s does not show its clave", name)
			}
		case w != nil && !bytes.Equal(got, w):
			t.Errorf("%s: %d bytes, the service serves %d", name, len(got), len(w))
		}
	}

	// The index: a line per clave, naming the files above.
	rows, err := csv.NewReader(bytes.NewReader(files[export.IndexName])).ReadAll()
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	if !slices.Equal(rows[0], export.IndexColumns) {
		t.Fatalf("index header %v", rows[0])
	}
	col := func(row []string, name string) string { return row[slices.Index(export.IndexColumns, name)] }
	byClave := map[string][]string{}
	for _, row := range rows[1:] {
		byClave[col(row, "clave")] = row
	}
	if len(rows) != 1+len(issued)+1 || len(byClave) != len(rows)-1 {
		t.Fatalf("index of %d lines for %d documents: %v", len(rows)-1, len(issued)+1, rows)
	}
	for _, c := range issued {
		row, ok := byClave[c]
		if !ok {
			t.Errorf("%s is not in the index", c)
			continue
		}
		for k, v := range map[string]string{"origen": export.OrigenEmitido, "tipoDocumento": tipos[c], "estado": "01",
			"consecutivo": c[21:41], "emisorIdentificacion": sellerID, "archivoXml": "emitidos/" + c + ".xml",
			"archivoRespuesta": "emitidos/" + c + "-respuesta.xml", "archivoPdf": "emitidos/" + c + ".pdf", "archivoMensaje": ""} {
			if got := col(row, k); got != v {
				t.Errorf("%s %s = %q, want %q", c, k, got, v)
			}
		}
		if col(row, "totalComprobante") == "" {
			t.Errorf("%s: no totalComprobante", c)
		}
	}
	row, ok := byClave[rec.Clave]
	if !ok {
		t.Fatalf("the received %s is not in the index", rec.Clave)
	}
	for k, v := range map[string]string{"origen": export.OrigenRecibido, "tipoDocumento": "01", "estado": "01",
		"emisorIdentificacion": supplierID, "receptorIdentificacion": sellerID, "mensajeReceptor": "1",
		"consecutivoMensaje": rec.ConsecutivoReceptor, "totalComprobante": "28251.13",
		"archivoXml": r + ".xml", "archivoMensaje": r + "-mensaje.xml", "archivoRespuesta": r + "-respuesta.xml", "archivoPdf": r + ".pdf"} {
		if got := col(row, k); got != v {
			t.Errorf("received %s = %q, want %q", k, got, v)
		}
	}
}
