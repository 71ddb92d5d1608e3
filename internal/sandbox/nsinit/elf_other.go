//go:build !amd64

package nsinit

// program is nil where there is no static init: the sandbox starts
// tiny-go's own binary as the init instead.
var program []byte
