package gateway

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"facturad/hacienda/msg"
)

// The English messages the tests compare answers with.
var (
	msgUnauth  = msg.Unauthenticated.With("").String()
	msgApology = "Sorry, something went wrong on our side; please report incident "
)

// TestMain runs the tests under a CatalogueWatch: any error answer of
// any test that says something outside the message catalogue fails the
// run, with the list of what.
func TestMain(m *testing.M) {
	watch := WatchCatalogue()
	code := m.Run()
	if problems := watch.Stop(); len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d error answers of the tests are not wholly of the message catalogue (hacienda/msg):\n", len(problems))
		for _, p := range problems {
			fmt.Fprintf(os.Stderr, "  %s\n", p)
		}
		code = 1
	}
	os.Exit(code)
}

// TestOpenAPIErrorCodes: the OpenAPI document's codes of the error bodies
// are the catalogue's answer codes, each described as the catalogue says,
// and the severe and A.6 bodies name the codes of a 500.
func TestOpenAPIErrorCodes(t *testing.T) {
	doc := loadOpenAPI(t)
	var codes, whens []string
	for _, e := range msg.All() {
		if e.Kind() == msg.Answer {
			codes = append(codes, e.Code())
			status := fmt.Sprint(e.Status())
			if e.Status() == 0 {
				status = "several statuses"
			}
			whens = append(whens, fmt.Sprintf("%s (%s)", e.When(), status))
		}
	}
	code := doc.Components.Schemas["Error"].Value.Properties["code"].Value
	var enum []string
	for _, v := range code.Enum {
		enum = append(enum, fmt.Sprint(v))
	}
	var descs []string
	if raw, ok := code.Extensions["x-enum-descriptions"].([]any); ok {
		for _, v := range raw {
			descs = append(descs, fmt.Sprint(v))
		}
	}
	if !slices.Equal(enum, codes) || !slices.Equal(descs, whens) {
		want, _ := json.MarshalIndent(map[string]any{"enum": codes, "x-enum-descriptions": whens}, "", "  ")
		t.Errorf("the Error schema's code (gateway/static/openapi.json) is not the catalogue's (hacienda/msg); put these in it:\n%s", want)
	}
	for name, e := range map[string]*msg.Entry{"internal_error": msg.InternalError, "outcome_unknown": msg.OutcomeUnknown} {
		if e.Code() != name || e.Status() != 500 {
			t.Errorf("%s: the catalogue's 500 entry is %s %d", name, e.Code(), e.Status())
		}
	}
	severe := doc.Components.Schemas["SevereError"].Value.Properties["code"].Value
	if len(severe.Enum) != 2 || severe.Enum[0] != "internal_error" || severe.Enum[1] != "outcome_unknown" {
		t.Errorf("SevereError.code enum %v, want internal_error and outcome_unknown", severe.Enum)
	}
}
