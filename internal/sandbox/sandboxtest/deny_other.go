//go:build !linux

// Package sandboxtest lets tests see the machine as many users do: with
// namespace creation denied. Off Linux there are no namespaces to deny.
package sandboxtest

import (
	"errors"
	"testing"
)

// DenyEnv is the variable that makes RunDenied's child call
// DenyNamespaces first.
const DenyEnv = "FAILPASS_TEST_DENY_NAMESPACES"

// DenyNamespaces fails: off Linux there is nothing to deny.
func DenyNamespaces() error { return errors.New("sandboxtest: not Linux") }

// RunDenied skips: off Linux there are no namespaces.
func RunDenied(t *testing.T, pattern string) { t.Skip("no namespaces off Linux") }
