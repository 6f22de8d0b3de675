package hacienda_test

import (
	"fmt"
	"strings"
	"time"

	"facturad/hacienda"
)

// Number the 123rd Factura Electrónica of terminal 1 at the head office and
// build its clave. A real caller passes nil as the random source, so the
// security code comes from crypto/rand; the fixed reader here only makes the
// output reproducible.
func ExampleNewClave() {
	cons, err := hacienda.NewConsecutivo("001", "00001", "01", 123)
	if err != nil {
		panic(err)
	}
	issued := time.Date(2025, 9, 15, 14, 3, 0, 0, hacienda.CostaRica)
	// The four bytes 00 bc 61 4e are the number 12345678.
	rnd := strings.NewReader("\x00\xbc\x61\x4e")
	clave, err := hacienda.NewClave(issued, "3101123456", cons, hacienda.SituacionNormal, rnd)
	if err != nil {
		panic(err)
	}
	fmt.Println(cons)
	fmt.Println(clave)
	// Output:
	// 00100001010000000123
	// 50615092500310112345600100001010000000123112345678
}

// Check a clave supplied by a client against the document it must number.
func ExampleClave_Check() {
	clave, err := hacienda.ParseClave("50615092500310112345600100001010000000123112345678")
	if err != nil {
		panic(err)
	}
	problems := clave.Check(hacienda.ClaveExpectation{
		IssuerID: "3101123456",
		Branch:   "001",
		DocType:  "04", // a tiquete, but the clave numbers a factura
		Issued:   time.Date(2025, 9, 15, 9, 30, 0, 0, hacienda.CostaRica),
	})
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// the clave's document type 01 is not the document type 04
}

// Read the parts of a clave.
func ExampleParseClave() {
	clave, err := hacienda.ParseClave("50615092500310112345600100001010000000123112345678")
	if err != nil {
		panic(err)
	}
	fmt.Println(clave.Date.Format("2006-01-02"), clave.IssuerID, clave.Consecutivo.Branch,
		clave.Consecutivo.Terminal, clave.Consecutivo.DocType, clave.Consecutivo.Number, clave.Situacion)
	// Output:
	// 2025-09-15 003101123456 001 00001 01 123 1
}
