//go:build !unix

package store

import "os"

func mapCounter(*os.File) (*epoch, error) { return nil, errNoMapping }
