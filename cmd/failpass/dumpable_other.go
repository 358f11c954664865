//go:build !linux

package main

// undumpable has no equivalent off Linux.
func undumpable() {}
