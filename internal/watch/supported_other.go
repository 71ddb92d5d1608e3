//go:build !linux

package watch

func supported(string) error { return ErrNoInotify }
