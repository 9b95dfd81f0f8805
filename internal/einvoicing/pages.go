package einvoicing

// page is what the event and webhook lists still use while their queries
// apply the allow-list in Go; every other list takes the credential's
// reach in its query's WHERE clause (tenancy.go) and fills its page there.
//
// page reads a list's rows after the id after, lim at a time (read), keeps
// those the credential may see (keep: its allow-list is applied in Go,
// after the query's LIMIT) and reads on until limit+1 are kept or the rows
// run out, so a page is full whatever the list holds outside the
// allow-list; the one past limit tells the caller there is a next page.
func page[R, V any](limit int, after string, read func(after string, lim int) ([]R, error),
	id func(R) string, keep func(R) bool, view func(R) (V, error)) ([]V, error) {
	out := make([]V, 0, limit+1)
	for len(out) <= limit {
		rows, err := read(after, limit+1)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			after = id(r)
			if len(out) > limit || !keep(r) {
				continue
			}
			v, err := view(r)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if len(rows) < limit+1 {
			break
		}
	}
	return out, nil
}

// plain is view for a view that cannot fail.
func plain[R, V any](f func(R) V) func(R) (V, error) {
	return func(r R) (V, error) { return f(r), nil }
}
