//go:build tools

// Package tools pins build-time dependencies (mockgen) in go.mod.
package tools

import (
	_ "github.com/golang/mock/mockgen"
)
