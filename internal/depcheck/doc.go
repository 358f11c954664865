// Package depcheck holds the test that keeps the code to the package table of docs/design.md: who imports whom, and who may start processes.
package depcheck
