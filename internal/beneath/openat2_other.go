//go:build !linux

package beneath

// openat2Dir: only Linux has openat2; elsewhere the walk by hand does it.
func openat2Dir(int, string) (fd int, tried bool, err error) { return -1, false, nil }
