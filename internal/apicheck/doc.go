// Package apicheck holds the test that keeps api/adamnode.txt — every
// exported name of the module's public packages, with its signature — equal
// to the code, so that a change of the API a user sees is a change of that
// file too, reviewed with the code and noted in CHANGELOG.md.
//
//	go test ./internal/apicheck            # fails, printing the difference, when the API changed
//	go test ./internal/apicheck -update    # rewrites api/adamnode.txt
//
// The API is read for linux/amd64 without build tags or cgo (the default
// build); the public packages are those outside internal/, cmd/, bench/ and
// examples/.
package apicheck
