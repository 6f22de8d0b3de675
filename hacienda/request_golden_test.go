package hacienda

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalculateGolden runs every testdata/calc/<case>.request.json through
// the calculate call and compares the answer (or the validation error, in
// the contract's 400 form) with <case>.answer.json. Run with -update to
// rewrite the answers, then review the diff.
func TestCalculateGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "calc", "*.request.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no calculate cases: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".request.json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var answer any
			req, err := DecodeCalculateRequest(body)
			if err == nil {
				answer, err = CalculateAmounts(req)
			}
			if err != nil {
				ve, ok := err.(*ValidationError)
				if !ok {
					t.Fatalf("error %v is not a *ValidationError", err)
				}
				answer = map[string]any{"statusCode": 400, "message": ve.Message, "errors": ve.FieldErrors()}
			}
			got, err := json.MarshalIndent(answer, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "calc", name+".answer.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("answer differs from %s:\n%s", golden, got)
			}
		})
	}
}
