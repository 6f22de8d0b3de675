package gateway

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/pipeline/export"
	"facturad/tenant"
	"facturad/tenant/storetest"
)

// anyCompany lets every caller export every company: these tests are
// about the stream, not about who may export.
type anyCompany struct{}

func (anyCompany) ListCompany(_ context.Context, _ tenant.Principal, id int64) (int64, error) {
	return id, nil
}

// streamDocs lists documents whose signed XML is xml (incompressible, so
// that the archive grows by about its size per document): n of them, or
// an endless listing when n is 0. Reading the failAt-th (from 1; 0 for
// never) fails.
type streamDocs struct {
	n, failAt int
	xml       []byte
}

func streamClave(i int) string { return fmt.Sprintf("506%047d", i) }

func (s streamDocs) ListDocuments(_ context.Context, q tenant.ListQuery) ([]tenant.Document, error) {
	from := 1
	if q.After != nil {
		from = int(q.After.ID) + 1
	}
	var out []tenant.Document
	for i := from; len(out) < q.Limit && (s.n == 0 || i <= s.n); i++ {
		out = append(out, tenant.Document{ID: int64(i), CompanyID: q.CompanyID, Clave: streamClave(i), FechaEmision: time.Now()})
	}
	return out, nil
}

func (s streamDocs) DocumentByClave(_ context.Context, clave string) (tenant.Document, error) {
	if s.failAt > 0 && clave == streamClave(s.failAt) {
		return tenant.Document{}, errors.New("the disk is on fire")
	}
	return tenant.Document{CompanyID: 1, Clave: clave, Submission: tenant.Submission{Estado: tenant.StateAccepted, SignedXML: s.xml}}, nil
}

// httpExportServer serves only the export route over real TCP on
// loopback, for net/http's client, with writeTimeout as the server's
// WriteTimeout.
func httpExportServer(t *testing.T, docs export.Documents, writeTimeout time.Duration) (base string, admin creds, exporter *export.Exporter, logs *syncBuffer) {
	t.Helper()
	w, svc := newTenantWorld(t, storetest.NewSQLite(t))
	exporter, err := export.New(export.Options{Companies: anyCompany{}, Documents: docs, PageSize: 10,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	logs = &syncBuffer{}
	srv, err := New(Options{Tenants: svc, Routes: []Route{ExportRoute(exporter)}, WriteTimeout: writeTimeout,
		Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), w.admin, exporter, logs
}

// getExport starts GET of company 1's export of the last hour with
// net/http's client, whose connections dial with dial.
func getExport(t *testing.T, base string, c creds, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Response {
	t.Helper()
	now := time.Now()
	q := "?desde=" + now.Add(-time.Hour).Format("2006-01-02") + "&hasta=" + now.Add(24*time.Hour).Format("2006-01-02")
	req, err := http.NewRequest(http.MethodGet, base+"/api/companies/1/exportar/v4"+q, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("AuthToken", c.token)
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.user+":"+c.pass)))
	tr := &http.Transport{DialContext: dial, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("GET export: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET export: %d %s", resp.StatusCode, b)
	}
	return resp
}

// TestExportHTTPFailsMidway: an export whose store read fails midway
// reaches a net/http client as a 200 whose chunked body ends without
// its closing chunk: reading it fails with io.ErrUnexpectedEOF, never a
// clean EOF, and what was read is not a whole ZIP but ends with the
// ERROR.txt entry that says why.
func TestExportHTTPFailsMidway(t *testing.T) {
	for _, tt := range []struct {
		name string
		docs streamDocs
	}{
		// Less than one write buffer before the failure: the ERROR.txt
		// entry and the documents before it are in the stream's buffer.
		{"early", streamDocs{n: 3, failAt: 2, xml: []byte("<FacturaElectronica/>")}},
		// Megabytes sent, many chunks, before the failure.
		{"after many chunks", streamDocs{n: 40, failAt: 30, xml: incompressible(64 << 10)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, admin, exporter, logs := httpExportServer(t, tt.docs, 10*time.Second)
			resp := getExport(t, base, admin, (&net.Dialer{}).DialContext)
			if te := resp.TransferEncoding; len(te) != 1 || te[0] != "chunked" {
				t.Errorf("transfer encoding %v, want chunked", te)
			}
			got, err := io.ReadAll(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("reading the body after %d bytes: %v, want io.ErrUnexpectedEOF", len(got), err)
			}
			if _, err := zip.NewReader(bytes.NewReader(got), int64(len(got))); err == nil {
				t.Error("the truncated body reads as a whole ZIP")
			}
			if !bytes.Contains(got, []byte(export.ErrorName)) || !bytes.Contains(got, []byte("INCOMPLETE")) {
				t.Errorf("the %d bytes received do not end with %s", len(got), export.ErrorName)
			}
			if !bytes.Contains(got, []byte("emitidos/"+streamClave(tt.docs.failAt-1)+".xml")) {
				t.Error("the document before the failure was not sent")
			}
			if bytes.Contains(got, []byte("emitidos/"+streamClave(tt.docs.failAt)+".xml")) {
				t.Error("the document that failed is in the archive")
			}
			waitNoExport(t, exporter)
			if !strings.Contains(logs.String(), "stream ended early") {
				t.Errorf("the server did not log the early end: %s", logs.String())
			}
		})
	}
}

// TestExportHTTPClientStopsReading: a client that stops reading an
// export is cut off by the server's per-write WriteTimeout: the export
// ends (its slot is freed), the server logs why, and the client that
// reads again finds a body that ends with an error, not a clean EOF.
// The client's receive buffer is made small so that the server's writes
// block soon; the export itself never ends on its own.
func TestExportHTTPClientStopsReading(t *testing.T) {
	base, admin, exporter, logs := httpExportServer(t, streamDocs{xml: incompressible(128 << 10)}, 200*time.Millisecond)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			if err != nil {
				return err
			}
			return serr
		}}
		return d.DialContext(ctx, network, addr)
	}
	resp := getExport(t, base, admin, dial)
	head := make([]byte, 1024)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatalf("the first bytes: %v", err)
	}
	if !bytes.HasPrefix(head, []byte("PK\x03\x04")) {
		t.Fatalf("the body does not start as a ZIP: % x", head[:8])
	}
	// The client reads nothing more: the server's writes block, and the
	// one that outlives WriteTimeout ends the export.
	waitNoExport(t, exporter)
	if !strings.Contains(logs.String(), "stream ended early") {
		t.Errorf("the server did not log the early end: %s", logs.String())
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil {
		t.Fatalf("the body read to a clean end after %d more bytes", n)
	}
	t.Logf("the client read %d more bytes, then: %v", n, err)
}

// waitNoExport waits until no export holds a slot: every streamed reply
// gives its slot back when it ends, however it ends.
func waitNoExport(t *testing.T, e *export.Exporter) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for e.Running() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the export never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// incompressible is n bytes deflate cannot shrink.
func incompressible(n int) []byte {
	b := make([]byte, n)
	x := uint64(0x2545f4914f6cdd1d)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}
