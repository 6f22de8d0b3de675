package hacienda

import (
	"encoding/json"
	"testing"
)

func TestAmountJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // MarshalJSON output
		set     bool
		wantErr bool
	}{
		{name: "ok/number", in: `1250.5`, want: `1250.5`, set: true},
		{name: "ok/string", in: `"1250.50"`, want: `1250.5`, set: true},
		{name: "ok/integer", in: `3`, want: `3`, set: true},
		{name: "ok/exponent", in: `1.5e2`, want: `150`, set: true},
		{name: "ok/negative", in: `-0.25`, want: `-0.25`, set: true},
		{name: "ok/null is absent", in: `null`, want: `null`},
		{name: "ok/empty string is absent", in: `""`, want: `null`},
		{name: "ok/rounds to 5 on output", in: `0.123455`, want: `0.12346`, set: true},
		{name: "ok/negative rounds away from zero", in: `-0.123455`, want: `-0.12346`, set: true},
		{name: "ok/long exact", in: `9999999999999.99999`, want: `9999999999999.99999`, set: true},
		{name: "ok/zero", in: `0`, want: `0`, set: true},
		{name: "error/word", in: `"abc"`, wantErr: true},
		{name: "error/nan", in: `"NaN"`, wantErr: true},
		{name: "error/huge exponent", in: `1e999999999`, wantErr: true},
		{name: "error/string exponent too big", in: `"1e41"`, wantErr: true},
		{name: "error/thousands", in: `"1,000.5"`, wantErr: true},
		{name: "error/bool", in: `true`, wantErr: true},
		{name: "error/object", in: `{}`, wantErr: true},
		{name: "error/too many digits", in: `12345678901234567890123456789012345678901`, wantErr: true},
		{name: "error/lonely dot", in: `"."`, wantErr: true},
		{name: "error/lonely sign", in: `"-"`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a Amount
			err := json.Unmarshal([]byte(tt.in), &a)
			if tt.wantErr {
				if err != nil || !a.Invalid() || !a.IsSet() {
					t.Fatalf("Unmarshal(%s) = %+v, %v; want an invalid, present amount and no error", tt.in, a, err)
				}
				return
			}
			if a.Invalid() {
				t.Fatalf("Unmarshal(%s) is invalid", tt.in)
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if a.IsSet() != tt.set {
				t.Fatalf("IsSet = %v, want %v", a.IsSet(), tt.set)
			}
			got, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("Marshal = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAmountOmitzero(t *testing.T) {
	type s struct {
		A Amount `json:"a,omitzero"`
		B Amount `json:"b,omitzero"`
	}
	got, err := json.Marshal(s{B: AmountFromInt(0)})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"b":0}` {
		t.Fatalf("got %s, want an absent a and a present zero b", got)
	}
}

func TestAmountPlaces(t *testing.T) {
	tests := []struct {
		in                string
		places, sigPlaces int32
		intDigits         int
	}{
		{"1.500", 3, 1, 1},
		{"1200", 0, 0, 4},
		{"0.00001", 5, 5, 0},
		{"-12.30", 2, 1, 2},
		{"0.000", 3, 0, 0},
	}
	for _, tt := range tests {
		a := MustAmount(tt.in)
		if a.Places() != tt.places || a.SignificantPlaces() != tt.sigPlaces || a.IntegerDigits() != tt.intDigits {
			t.Errorf("%s: Places=%d SignificantPlaces=%d IntegerDigits=%d, want %d %d %d", tt.in,
				a.Places(), a.SignificantPlaces(), a.IntegerDigits(), tt.places, tt.sigPlaces, tt.intDigits)
		}
	}
}

func TestParseAmountRefusesExponent(t *testing.T) {
	if _, err := ParseAmount("1e3"); err == nil {
		t.Fatal("ParseAmount accepted an exponent; XML decimals have none")
	}
	if a, err := ParseAmount("+.5"); err != nil || a.String() != "0.5" {
		t.Fatalf("ParseAmount(+.5) = %v, %v", a, err)
	}
}
