package tenant_test

import (
	"strings"
	"testing"

	"facturad/tenant"
)

func TestArgon2id(t *testing.T) {
	h := tenant.Argon2id{Memory: 64, Time: 1, Threads: 1}
	enc, err := h.Hash([]byte("correct horse"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") || strings.Contains(enc, "correct horse") {
		t.Fatalf("encoded hash %q", enc)
	}
	enc2, _ := h.Hash([]byte("correct horse"))
	if enc == enc2 {
		t.Fatal("two hashes of one password are equal (no salt)")
	}
	// Verify reads the parameters from the hash, whatever the hasher's own.
	for _, v := range []tenant.Argon2id{h, tenant.DefaultArgon2id, {}} {
		ok, err := v.Verify(enc, []byte("correct horse"))
		if err != nil || !ok {
			t.Fatalf("Verify with %+v = %v, %v", v, ok, err)
		}
		ok, err = v.Verify(enc, []byte("correct horsf"))
		if err != nil || ok {
			t.Fatalf("wrong password verified: %v, %v", ok, err)
		}
	}
}

func TestArgon2idDefaults(t *testing.T) {
	enc, err := tenant.Argon2id{}.Hash([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("zero value did not use the defaults: %q", enc)
	}
}

func TestArgon2idRejectsMalformed(t *testing.T) {
	good, _ := tenant.Argon2id{Memory: 64, Time: 1, Threads: 1}.Hash([]byte("pw"))
	parts := strings.Split(good, "$")
	tests := []struct{ name, enc string }{
		{"error/empty", ""},
		{"error/bcrypt", "$2a$12$abcdefghijklmnopqrstuuJ9ZpH1l0E0P1i0a1m2b3c4d5e6f7g8h"},
		{"error/argon2i", strings.Replace(good, "argon2id", "argon2i", 1)},
		{"error/version", strings.Replace(good, "v=19", "v=16", 1)},
		{"error/huge memory", strings.Replace(good, "m=64", "m=99999999", 1)},
		{"error/zero time", strings.Replace(good, "t=1", "t=0", 1)},
		{"error/bad salt", strings.Join([]string{"", parts[1], parts[2], parts[3], "!!", parts[5]}, "$")},
		{"error/short key", strings.Join([]string{"", parts[1], parts[2], parts[3], parts[4], "AAAA"}, "$")},
		{"error/missing part", strings.Join(parts[:5], "$")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := tenant.DefaultArgon2id.Verify(tt.enc, []byte("pw"))
			if err == nil || ok {
				t.Fatalf("Verify(%q) = %v, %v", tt.enc, ok, err)
			}
		})
	}
}

func TestHashToken(t *testing.T) {
	a := tenant.HashToken("token-a")
	if len(a) != 32 || !tenant.TokenHashEqual(a, tenant.HashToken("token-a")) || tenant.TokenHashEqual(a, tenant.HashToken("token-b")) {
		t.Fatal("HashToken / TokenHashEqual")
	}
	if tenant.TokenHashEqual(nil, nil) || tenant.TokenHashEqual(a[:16], a[:16]) {
		t.Fatal("short digests compare equal")
	}
}

func TestValidationErrorForm(t *testing.T) {
	err := tenant.CheckUsername("usuario", "a b")
	fe := fieldErrors(t, err)
	if len(fe["usuario"]) != 1 {
		t.Fatalf("fields %v", fe)
	}
	if !strings.Contains(err.Error(), "usuario:") {
		t.Fatalf("Error() = %q", err.Error())
	}
	if tenant.CheckUsername("usuario", "caja.1@tienda-2") != nil {
		t.Fatal("a good name was refused")
	}
}
