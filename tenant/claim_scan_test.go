package tenant

import (
	"errors"
	"testing"
)

// fakeClaimRows are claim rows in memory, each the six columns ScanClaims
// reads.
type fakeClaimRows struct {
	rows [][]any
	i    int
	err  error // returned by Err at the end
}

func (f *fakeClaimRows) Next() bool { f.i++; return f.i <= len(f.rows) }

func (f *fakeClaimRows) Scan(dest ...any) error {
	row := f.rows[f.i-1]
	if len(dest) != len(row) {
		return errors.New("column count")
	}
	for k, v := range row {
		switch d := dest[k].(type) {
		case *int64:
			*d = v.(int64)
		case *string:
			*d = v.(string)
		default:
			return errors.New("unexpected destination")
		}
	}
	return nil
}

func (f *fakeClaimRows) Err() error { return f.err }

// TestScanClaims: the one reading of the claims' rows both stores use.
func TestScanClaims(t *testing.T) {
	rows := &fakeClaimRows{rows: [][]any{
		{int64(1), int64(0), ClaimBalance, "100.5", "", "01"},
		{int64(2), int64(1), ClaimCredit, "10", `{"lines":{"1":"2.5"}}`, "04"},
		{int64(3), int64(1), ClaimPayment, "20", `{"taxes":{"01/08":"2.3"}}`, "01"},
		{int64(5), int64(4), ClaimPayment, "1", "", "00"},
	}}
	m, err := ScanClaims(rows)
	if err != nil {
		t.Fatal(err)
	}
	one := m[1]
	if one.Balance == nil || one.Balance.DocumentID != 1 || one.Balance.Amount != "100.5" || one.Balance.Estado != StateAccepted {
		t.Errorf("balance %+v", one.Balance)
	}
	if len(one.On) != 2 || one.On[0].DocumentID != 2 || one.On[0].Lines[1] != "2.5" || one.On[0].Estado != StateSent ||
		one.On[1].DocumentID != 3 || one.On[1].Taxes["01/08"] != "2.3" {
		t.Errorf("claims on 1: %+v", one.On)
	}
	if four := m[4]; four.Balance != nil || len(four.On) != 1 || four.On[0].Kind != ClaimPayment {
		t.Errorf("claims on 4: %+v", four)
	}
	if _, ok := m[2]; ok {
		t.Errorf("a claiming document has claims of its own: %+v", m[2])
	}

	bad := errors.New("connection lost")
	if _, err := ScanClaims(&fakeClaimRows{err: bad}); !errors.Is(err, bad) {
		t.Errorf("the rows' error: %v", err)
	}
	if _, err := ScanClaims(&fakeClaimRows{rows: [][]any{{int64(2), int64(1), ClaimCredit, "1", "{", "01"}}}); err == nil {
		t.Error("a detail that is not JSON was read")
	}
	if _, err := ScanClaims(&fakeClaimRows{rows: [][]any{{int64(2), int64(1)}}}); err == nil {
		t.Error("a scan error was dropped")
	}
}
