package postgres

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"facturad/hacienda"
)

// typeCodes are the two-digit codes quoted in an SQL text.
var typeCodes = regexp.MustCompile(`'(\d\d)'`)

func quotedCodes(sql string) []string {
	var out []string
	for _, m := range typeCodes.FindAllStringSubmatch(sql, -1) {
		out = append(out, m[1])
	}
	return out
}

// The SQL that names document types by code agrees with hacienda's table
// of types: the listing's counterparty is the Emisor in the types the
// buyer issues, and a received document's message is numbered as a
// receiver's message. The SQL is written out (an index matches only the
// same expression, and a migration never changes), so a change to the
// table fails here until a migration follows it.
func TestSQLDocumentTypes(t *testing.T) {
	byBuyer := hacienda.TypeCodes(func(t hacienda.TypeInfo) bool { return t.IssuedByBuyer })
	if got := quotedCodes(listCounterparty); !slices.Equal(got, byBuyer) {
		t.Errorf("listCounterparty names types %v, the types issued by the buyer are %v", got, byBuyer)
	}
	b, err := migrationFiles.ReadFile("migrations/0001_schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	var check string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "tipo" {
			check = line
		}
	}
	messages := hacienda.TypeCodes(hacienda.TypeInfo.IsReceiverMessage)
	if got := quotedCodes(check); !slices.Equal(got, messages) {
		t.Errorf("received.tipo is checked against %v (%q), the receiver's messages are %v", got, check, messages)
	}
}
