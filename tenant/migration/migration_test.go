package migration_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"facturad/tenant/migration"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		// Version order is numeric, not by name: 10 after 9.
		"m/0010_ten.sql":   file("ten"),
		"m/0002_two.sql":   file("two"),
		"m/9_nine.sql":     file("nine"),
		"m/0001_one.sql":   file("one"),
		"m/README.md":      file("not a migration"),
		"other/0003_x.sql": file("another folder"),
	}
	got, err := migration.Load(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	want := []migration.Migration{
		{Version: 1, Name: "0001_one.sql", SQL: "one"},
		{Version: 2, Name: "0002_two.sql", SQL: "two"},
		{Version: 9, Name: "9_nine.sql", SQL: "nine"},
		{Version: 10, Name: "0010_ten.sql", SQL: "ten"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d migrations %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("migration %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestLoadEmpty(t *testing.T) {
	got, err := migration.Load(fstest.MapFS{}, "m")
	if err != nil || len(got) != 0 {
		t.Errorf("Load on an empty folder = %+v, %v", got, err)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		fsys fstest.MapFS
		want string // part of the error
	}{
		{"error/duplicate version", fstest.MapFS{
			"m/0001_tenant.sql":                 file("a"),
			"m/0003_document_consecutivo.sql":   file("b"),
			"m/0003_company_identification.sql": file("c"),
		}, "share version 3"},
		{"error/same number spelt differently", fstest.MapFS{
			"m/3_a.sql":    file("a"),
			"m/0003_b.sql": file("b"),
		}, "share version 3"},
		{"error/no underscore", fstest.MapFS{"m/0001.sql": file("a")}, "0001.sql"},
		{"error/not a number", fstest.MapFS{"m/first_a.sql": file("a")}, "first_a.sql"},
		{"error/zero", fstest.MapFS{"m/0000_a.sql": file("a")}, "positive version"},
		{"error/negative", fstest.MapFS{"m/-1_a.sql": file("a")}, "positive version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := migration.Load(tt.fsys, "m")
			if err == nil {
				t.Fatalf("Load succeeded: %+v", ms)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}
