package cli

import "os"

// IsTerminal reports whether f is an interactive terminal, so that a
// command may ask a question there: a character device other than the null
// device (which a service manager or a test gives as standard input, and
// which is a character device too).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
