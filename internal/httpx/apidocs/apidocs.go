// Package apidocs serves a service's API reference page at /docs: its own
// OpenAPI document (/v1/openapi.json) rendered in the browser by Redoc
// 2.5.0 (MIT; redoc.LICENSE), whose standalone bundle is embedded in the
// binary, so the page works offline and fetches nothing from elsewhere.
package apidocs

import (
	_ "embed"
	"html/template"
	"net/http"
	"strconv"
)

// RedocVersion is the embedded bundle's version (npm package redoc).
const RedocVersion = "2.5.0"

// RedocSHA256 is the SHA-256 of the embedded redoc.standalone.js, as
// published in the npm package (apidocs_test checks it).
const RedocSHA256 = "0ec05be285ac885a330289b02f470e1bdbd2b6b3223a9fa213f24bf805a851d1"

//go:embed redoc.standalone.js
var redocJS []byte

//go:embed init.js
var initJS []byte

var page = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.}}: reference</title>
</head>
<body>
<noscript>The reference needs JavaScript; the document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="reference"></div>
<script src="/docs/redoc.standalone.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`))

// csp allows only this origin, plus what Redoc needs in the page: inline
// styles (styled-components) and its search worker started from a blob.
const csp = "default-src 'self'; script-src 'self'; worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// Register adds GET /docs, GET /docs/redoc.standalone.js and GET
// /docs/init.js to mux; title names the service on the page.
func Register(mux *http.ServeMux, title string) {
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Cache-Control", "no-cache")
		_ = page.Execute(w, title)
	})
	asset := func(b []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.Header().Set("Cache-Control", "public, max-age=86400")
			_, _ = w.Write(b)
		}
	}
	mux.HandleFunc("GET /docs/redoc.standalone.js", asset(redocJS))
	mux.HandleFunc("GET /docs/init.js", asset(initJS))
}
