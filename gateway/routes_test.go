package gateway

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"facturad/pipeline"
	"facturad/pipeline/export"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// routeDeps are what the package's route constructors serve over. Nil
// values register their routes without serving them (a test that only
// looks at the route table).
type routeDeps struct {
	docs      *pipeline.Pipeline
	tenants   *tenant.Service
	registry  Registry
	cursorKey []byte
	// exporter serves the export; nil: one over no documents.
	exporter ExportStarter
}

// orNoCompanies is c, or when nil one that lets no one export anything.
func orNoCompanies(c export.Companies) export.Companies {
	if c == nil {
		return noCompanies{}
	}
	return c
}

type noCompanies struct{}

func (noCompanies) ListCompany(context.Context, tenant.Principal, int64) (int64, error) {
	return 0, tenant.ErrNotFound
}

// noDocuments is an export source with no documents.
type noDocuments struct{}

func (noDocuments) ListDocuments(context.Context, tenant.ListQuery) ([]tenant.Document, error) {
	return nil, nil
}

func (noDocuments) DocumentByClave(context.Context, string) (tenant.Document, error) {
	return tenant.Document{}, tenant.ErrNotFound
}

// serviceRoutes returns the routes of every route constructor of the
// package, as the service registers them beside the built-in ones, so that
// the tests that go through every route (the OpenAPI description, the
// audit log) meet a route as soon as it exists. TestServiceRoutesComplete
// holds it to the package's constructors.
func serviceRoutes(t testing.TB, d routeDeps) []Route {
	t.Helper()
	if d.cursorKey == nil {
		d.cursorKey = make([]byte, 32)
	}
	list, err := DocumentListRoute(d.docs, d.cursorKey)
	if err != nil {
		t.Fatal(err)
	}
	listReceived, err := ReceivedListRoute(d.docs, d.cursorKey)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := AuditRoute(d.tenants, d.cursorKey)
	if err != nil {
		t.Fatal(err)
	}
	operators, err := OperatorRoutes(d.tenants, d.cursorKey)
	if err != nil {
		t.Fatal(err)
	}
	if d.exporter == nil {
		var companies export.Companies = d.tenants
		if d.tenants == nil {
			companies = nil
		}
		e, err := export.New(export.Options{Companies: orNoCompanies(companies), Documents: noDocuments{}})
		if err != nil {
			t.Fatal(err)
		}
		d.exporter = e
	}
	return slices.Concat(DocumentRoutes(d.docs, nil, printed.Printer{}), ReceivedRoutes(d.docs, nil, printed.Printer{}), WebhookRoutes(d.tenants),
		[]Route{list, listReceived, audit, CalculateRoute(), CallbackRoute(d.docs)},
		EmailRoutes(d.docs, d.tenants), RegistryRoutes(d.registry), []Route{ConnectionTestRoute(d.docs)}, operators, UsageRoutes(d.tenants),
		[]Route{IVARoute(d.tenants), ExportRoute(d.exporter)}, DerivedRoutes(d.docs))
}

// TestServiceRoutesComplete: serviceRoutes calls every exported function
// of the package that returns routes, so that a constructor added later
// is held to the tests that walk every route.
func TestServiceRoutesComplete(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var constructors, called []string
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil {
				continue
			}
			if fn.Name.Name == "serviceRoutes" {
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok {
						if id, ok := c.Fun.(*ast.Ident); ok {
							called = append(called, id.Name)
						}
					}
					return true
				})
			}
			if strings.HasSuffix(name, "_test.go") || !fn.Name.IsExported() || fn.Type.Results == nil {
				continue
			}
			for _, r := range fn.Type.Results.List {
				if returnsRoutes(r.Type) {
					constructors = append(constructors, fn.Name.Name)
					break
				}
			}
		}
	}
	if len(constructors) < 8 {
		t.Fatalf("found only %d route constructors: %v", len(constructors), constructors)
	}
	for _, c := range constructors {
		if !slices.Contains(called, c) {
			t.Errorf("serviceRoutes does not register %s's routes: add it there", c)
		}
	}
}

// returnsRoutes reports whether a result type is Route or []Route.
func returnsRoutes(e ast.Expr) bool {
	if a, ok := e.(*ast.ArrayType); ok {
		e = a.Elt
	}
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "Route"
}
