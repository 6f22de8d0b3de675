package migration_test

import (
	"os"
	"slices"
	"testing"

	"facturad/tenant/migration"
)

// The two stores share one schema history: every migration has the same
// number and the same name in both folders, so that a version names the
// same schema on either store (docs/design/stores.md, "Migrations").
func TestDialectsShareMigrations(t *testing.T) {
	root := os.DirFS("..")
	names := map[string][]string{}
	for _, dialect := range []string{"postgres", "sqlite"} {
		ms, err := migration.Load(root, dialect+"/migrations")
		if err != nil {
			t.Fatalf("%s: %v", dialect, err)
		}
		if len(ms) == 0 {
			t.Fatalf("%s: no migrations found", dialect)
		}
		for _, m := range ms {
			names[dialect] = append(names[dialect], m.Name)
		}
	}
	pg, lite := names["postgres"], names["sqlite"]
	if !slices.Equal(pg, lite) {
		for _, n := range pg {
			if !slices.Contains(lite, n) {
				t.Errorf("%s is a PostgreSQL migration with no SQLite file of that number and name", n)
			}
		}
		for _, n := range lite {
			if !slices.Contains(pg, n) {
				t.Errorf("%s is a SQLite migration with no PostgreSQL file of that number and name", n)
			}
		}
	}
}
