package signer

//go:generate go run ./internal/genfixture -out testdata
