// Package httpx is the HTTP plumbing both denar services share: RFC 9457
// problems with stable codes, request ids, access logs and metrics,
// authentication and X-Company-Id resolution, per-credential rate limits,
// durable idempotency keys and opaque cursors. Operations are registered with
// huma on the standard library's ServeMux; each declares in its metadata
// which credential and scope it needs and whether it takes Idempotency-Key,
// and the same declaration is written into the OpenAPI document.
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/httpx/apidocs"
	"github.com/denar-mk/denar/internal/idempotency"
)

// installProblems makes huma build its errors (schema violations, malformed
// bodies, and errors handlers return) as our problems. huma offers this
// only as package variables; the function set is stateless (the request's
// context carries what varies), so every service installs the same one.
var installProblems = sync.OnceFunc(func() {
	huma.NewErrorWithContext = humaProblem
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		return humaProblem(nil, status, msg, errs...)
	}
})

// Authenticator turns a bearer secret presented to a service into a principal.
type Authenticator interface {
	Authenticate(ctx context.Context, service, secret string) (*auth.Principal, error)
}

// Options configure a Service.
type Options struct {
	Name        string // "payroll" or "einvoice": the credential service it accepts
	Title       string
	Version     string
	Description string
	Auth        Authenticator
	// Companies resolves X-Company-Id for operations that act for a company.
	Companies Companies
	// Agents authenticates signing agents (e-invoicing only).
	Agents Agents
	// Idempotency keeps Idempotency-Key claims; nil disables the header.
	Idempotency *idempotency.Keeper
	// Ready reports whether the service can serve (the store answers);
	// /readyz calls it. nil means always ready.
	Ready func(context.Context) error
	// DocsURL is the base of every problem's type URI: type = DocsURL +
	// "#" + code.
	DocsURL string
	Log     *slog.Logger
	// IdempotencyRequired makes Idempotency-Key mandatory on every POST
	// operation that does not opt out (the e-invoicing rule); otherwise
	// the header is honoured when present.
	IdempotencyRequired bool
	// EffectsInTx says every POST of the service stores its idempotent
	// response in the transaction of its effect; one that does not is
	// logged as an error (it would reopen the window a crash could use to
	// run it twice).
	EffectsInTx bool
	RateLimit   RateLimit
	// AddressLimit limits the unauthenticated operations (Spec.Auth
	// AuthNone, and the routes named to LimitByAddress) per client IP
	// address, in this process. A zero Rate disables it.
	AddressLimit RateLimit
	// MaxBodyBytes is the body limit of every route that declares none;
	// default DefaultMaxBodyBytes (64 KiB).
	MaxBodyBytes int64
	// HeavyConcurrency is how many requests to heavy operations
	// (Spec.Heavy) run at once; more are answered 503 server_busy.
	// Default DefaultHeavyConcurrency; negative: no limit.
	HeavyConcurrency int
	// ServiceURLs are where each service listens (auth.ServicePayroll,
	// auth.ServiceEInvoice → base URL), named in the 401 to a credential of
	// the other service.
	ServiceURLs map[string]string
	// Servers are the document's servers (the default local address of
	// the service).
	Servers []*huma.Server
	// Tags are the document's tags, one for each tag an operation names,
	// with its description.
	Tags []*huma.Tag
	// MaxStringLength is the maxLength given to every string of a request
	// body whose schema bounds it in no other way (no maxLength, enum, or
	// date or time format): written into the document and enforced by the
	// schema validation like any other maxLength. 0: none.
	MaxStringLength int
	// CodebookURL, when set, is where the values of a code list are
	// listed ("GET /v1/codebooks/tax-indicators"), "" for a list the
	// service does not serve: a field error naming a codebook gets it in
	// its message, so a caller told a code is wrong learns where the
	// right ones are.
	CodebookURL func(codebook string) string
}

// Service is one HTTP service: its mux, its huma API and its metrics.
type Service struct {
	Name     string
	Mux      *http.ServeMux
	API      huma.API
	Metrics  *Metrics
	opts     Options
	limiter  *limiter
	upgrades *http.ServeMux
	limits   *routeLimits
	// finish completes the document and the schemas once every operation
	// is registered: before the first rendering or the first request.
	finish sync.Once
	// examples are the example bodies by Go type (Example, ExampleJSON),
	// written into their schemas by finishRegistration.
	examples map[reflect.Type]any
	// dispatchTo is the complete handler Dispatch serves requests with.
	dispatchOnce sync.Once
	dispatchTo   http.Handler
}

// Operation metadata keys read by the middleware.
const (
	metaAuth        = "denar.auth"        // AuthKey (default), AuthNone, AuthAgent
	metaScope       = "denar.scope"       // the scope the credential must carry
	metaOrScope     = "denar.orscope"     // another scope that will do
	metaCompany     = "denar.company"     // true: resolve X-Company-Id
	metaCompanyOpt  = "denar.companyopt"  // true: resolve X-Company-Id when sent
	metaIdempotency = "denar.idempotency" // "none" opts a POST out
	metaStream      = "denar.stream"      // true: the handler decodes (and checks) the body itself
	metaRaw         = "denar.raw"         // true: the handler decodes the body's bytes; strings get the default maxLength here
	metaBodyType    = "denar.bodytype"    // reflect.Type of the input's Body, for the paths of its decoding errors
	metaRespTypes   = "denar.resptypes"   // []string: the media types of the success responses, for Accept
)

// Authentication modes of an operation.
const (
	AuthKey    = "key"    // Authorization: Bearer <API key or access token>
	AuthNone   = "none"   // public
	AuthAgent  = "agent"  // Authorization: Agent <id>.<secret>
	AuthSigner = "signer" // Agent, or Bearer with the operation's scope (inline signing)
)

// Agents authenticate signing agents.
type Agents interface {
	AuthenticateAgent(ctx context.Context, id, secret string) (*auth.Principal, error)
}

// NewService builds a service with its health, readiness, metrics, OpenAPI
// and API reference (/docs) routes.
func NewService(o Options) *Service {
	installProblems()
	if o.DocsURL == "" {
		o.DocsURL = DefaultDocsURL
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.HeavyConcurrency == 0 {
		o.HeavyConcurrency = DefaultHeavyConcurrency
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	cfg := huma.DefaultConfig(o.Title, o.Version)
	cfg.OpenAPIPath = ""
	cfg.DocsPath = ""
	cfg.SchemasPath = ""
	cfg.CreateHooks = nil // no $schema member or Link header in responses
	cfg.Formats = map[string]huma.Format{"application/json": jsonFormat(), "json": jsonFormat()}
	cfg.Info.Description = o.Description
	cfg.Info.Contact = &huma.Contact{Name: "denar", URL: "https://github.com/denar-mk/denar"}
	cfg.Servers = o.Servers
	cfg.Tags = o.Tags
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "An API key (dn_test_… or dn_live_…) or an OAuth access token."},
	}
	if o.Agents != nil {
		cfg.Components.SecuritySchemes["agent"] = &huma.SecurityScheme{Type: "apiKey", In: "header", Name: "Authorization",
			Description: "A signing agent's credentials: `Agent <AGENT_ID>.<AGENT_SECRET>`, as issued once by POST /v1/agents/pair."}
	}
	mux := http.NewServeMux()
	api := humago.New(mux, cfg)
	// Every code the service answers, with its status and meaning
	// (docs/errors.md has the same list).
	api.OpenAPI().Extensions = map[string]any{"x-problem-codes": codesOf(o.Name)}
	s := &Service{Name: o.Name, Mux: mux, API: api, Metrics: NewMetrics(o.Name), opts: o, limiter: newLimiter(o.RateLimit),
		limits: newRouteLimits(o.MaxBodyBytes, o.HeavyConcurrency)}
	if o.AddressLimit.Rate > 0 {
		s.limits.addr = newLimiter(o.AddressLimit)
	}
	api.UseMiddleware(s.guard)

	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if o.Ready != nil {
			if err := o.Ready(ctx); err != nil {
				o.Log.Warn("not ready", "err", err)
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "store": "unreachable"})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.Metrics.Registry, promhttp.HandlerOpts{}))
	// The API reference page, rendered from /v1/openapi.json by the
	// embedded Redoc bundle.
	apidocs.Register(mux, o.Title)
	mux.HandleFunc("GET /v1/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		b, err := s.OpenAPIJSON()
		if err != nil {
			WriteProblem(w, r, FromError(err))
			return
		}
		w.Header().Set("Content-Type", "application/openapi+json")
		_, _ = w.Write(b)
	})
	return s
}

// Handler returns the service's complete handler. Operations are all
// registered by then.
func (s *Service) Handler() http.Handler {
	s.finish.Do(s.finishRegistration)
	h := outer(s.Name, s.opts.DocsURL, s.Mux, s.upgrades, s.Metrics, s.opts.Log, s.limits)
	if url := s.opts.CodebookURL; url != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), codebookKey, url)))
		})
	}
	return h
}

// LimitByAddress puts routes the service serves outside Register (plain
// handlers with no credential: the OAuth token endpoint, mandate pages)
// under Options.AddressLimit, by their ServeMux patterns.
func (s *Service) LimitByAddress(patterns ...string) {
	for _, p := range patterns {
		s.limits.public[p] = true
	}
}

// HandleUpgrade serves WebSocket upgrade requests matching pattern with h,
// while other requests to the same path reach the REST operation
// registered there (a long-poll, say). h authenticates for itself.
func (s *Service) HandleUpgrade(pattern string, h http.Handler) {
	if s.upgrades == nil {
		s.upgrades = http.NewServeMux()
	}
	s.upgrades.Handle(pattern, h)
}

// OpenAPIJSON renders the service's OpenAPI 3.1 document, indented, as
// committed under api/.
func (s *Service) OpenAPIJSON() ([]byte, error) {
	s.finish.Do(s.finishRegistration)
	raw, err := json.Marshal(s.API.OpenAPI())
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Spec describes how an operation is guarded.
type Spec struct {
	Auth    string // AuthKey when empty
	Scope   string // required scope for AuthKey operations
	Company bool   // resolve X-Company-Id for this operation
	// CompanyFilter makes X-Company-Id optional: when sent it is checked
	// as for Company (403 for a company of another environment or outside
	// the allow-list) and narrows a list to that company; when absent the
	// operation acts for no company in particular.
	CompanyFilter bool
	// OrScope is a second scope that also grants the operation.
	OrScope string
	// NoIdempotency opts a POST out of Idempotency-Key handling (OAuth token).
	NoIdempotency bool
	// MaxBodyBytes is the operation's body limit (also settable as huma's
	// Operation.MaxBodyBytes); the service's default when both are zero.
	MaxBodyBytes int64
	// Heavy puts the operation under the service's concurrency limit for
	// heavy work (files, batches): over it, 503 server_busy.
	Heavy bool
	// StreamedBody says the handler decodes the body itself as it arrives
	// (the file endpoints) and applies the text rules (jsontext.CheckJSONText)
	// as it goes; the guard then leaves the body unread.
	StreamedBody bool
	// RawBody says the handler decodes the body from its bytes (huma's
	// RawBody) rather than huma against the documented schema: the guard
	// then enforces jsontext.DefaultMaxStringLength, the maxLength the
	// document shows for strings without their own, on every string.
	RawBody bool
}

// Register adds an operation to s, guarded as spec says, and documents the
// guard (security requirement with scope, X-Company-Id and Idempotency-Key
// headers, and the problem responses) in the OpenAPI document.
func Register[I, O any](s *Service, op huma.Operation, spec Spec, handler func(context.Context, *I) (*O, error)) {
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	if spec.Auth == "" {
		spec.Auth = AuthKey
	}
	op.Metadata[metaAuth] = spec.Auth
	op.Metadata[metaScope] = spec.Scope
	op.Metadata[metaOrScope] = spec.OrScope
	op.Metadata[metaCompany] = spec.Company
	op.Metadata[metaCompanyOpt] = spec.CompanyFilter && !spec.Company
	if spec.NoIdempotency {
		op.Metadata[metaIdempotency] = "none"
	}
	op.Metadata[metaStream] = spec.StreamedBody
	op.Metadata[metaRaw] = spec.RawBody
	if f, ok := reflect.TypeFor[I]().FieldByName("Body"); ok && !spec.RawBody && !spec.StreamedBody {
		op.Metadata[metaBodyType] = f.Type
	}
	declared := spec.MaxBodyBytes != 0 || op.MaxBodyBytes != 0
	limit := spec.MaxBodyBytes
	if limit == 0 {
		limit = op.MaxBodyBytes
	}
	if limit == 0 {
		limit = s.opts.MaxBodyBytes
	}
	pattern := strings.ToUpper(op.Method) + " " + op.Path
	s.limits.body[pattern] = limit
	if spec.Auth == AuthNone {
		s.limits.public[pattern] = true
	}
	if spec.Heavy {
		s.limits.heavy[pattern] = true
	}
	// The limit is enforced before huma reads (outer's MaxBytesReader);
	// huma refuses a body of exactly its MaxBodyBytes, one more lets a body
	// of exactly the limit through.
	op.MaxBodyBytes = limit + 1
	scopes := []string{}
	if spec.Scope != "" {
		scopes = []string{spec.Scope}
	}
	switch spec.Auth {
	case AuthKey:
		op.Security = []map[string][]string{{"bearer": scopes}}
	case AuthAgent:
		op.Security = []map[string][]string{{"agent": {}}}
	case AuthSigner:
		op.Security = []map[string][]string{{"agent": {}}, {"bearer": scopes}}
	}
	if spec.Auth == AuthKey || spec.Auth == AuthSigner {
		if op.Extensions == nil {
			op.Extensions = map[string]any{}
		}
		op.Extensions["x-required-scope"] = spec.Scope
		if spec.OrScope != "" {
			op.Extensions["x-required-scope"] = spec.Scope + " or " + spec.OrScope
			op.Security = append(op.Security, map[string][]string{"bearer": {spec.OrScope}})
		}
	}
	if spec.Company {
		op.Parameters = append(op.Parameters, &huma.Param{
			Name: "X-Company-Id", In: "header",
			Description: "The company the request acts for. Required when the credential can reach more than one company.",
			Schema:      &huma.Schema{Type: "string", MaxLength: ptr(100)},
		})
	} else if spec.CompanyFilter {
		op.Parameters = append(op.Parameters, &huma.Param{
			Name: "X-Company-Id", In: "header",
			Description: "Optional: only this company. A company the credential cannot reach is 403 company_not_allowed; one of the other environment 403 environment_mismatch.",
			Schema:      &huma.Schema{Type: "string", MaxLength: ptr(100)},
		})
	}
	if op.Method == http.MethodPost && !spec.NoIdempotency {
		desc := "Makes the request safe to retry: the first completed response is stored for 24 hours and replayed for the same key and body."
		if s.opts.IdempotencyRequired {
			desc = "Required. " + desc
		}
		op.Parameters = append(op.Parameters, &huma.Param{
			Name: "Idempotency-Key", In: "header", Required: s.opts.IdempotencyRequired,
			Description: desc, Schema: &huma.Schema{Type: "string", MaxLength: ptr(255)},
		})
	}
	if spec.Auth != AuthNone {
		if op.Responses == nil {
			op.Responses = map[string]*huma.Response{}
		}
		if op.Responses["401"] == nil {
			op.Responses["401"] = s.problemResponse("unauthenticated: missing, malformed or expired credentials; key_revoked: the API key or OAuth client was revoked.")
		}
	}
	huma.Register(s.API, op, handler)
	documentLimits(s, op.Method, op.Path, limit, declared, spec.Heavy)
}

// problemResponse is a problem+json response of the schema huma documents
// for its own errors, found the way huma finds it.
func (s *Service) problemResponse(desc string) *huma.Response {
	errType := reflect.TypeOf(huma.NewError(0, ""))
	for errType.Kind() == reflect.Pointer {
		errType = errType.Elem()
	}
	schema := s.API.OpenAPI().Components.Schemas.Schema(errType, true, "Error")
	return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/problem+json": {Schema: schema}}}
}

// Example makes v the example of its type's schema: the body the
// reference (/docs) shows for every operation that takes or answers that
// type. A type no operation uses is a programming error, reported when the
// document is finished.
func (s *Service) Example(v any) {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		v = reflect.ValueOf(v).Elem().Interface()
	}
	if s.examples == nil {
		s.examples = map[reflect.Type]any{}
	}
	s.examples[t] = v
}

// ExampleJSON makes the JSON text the example of type t's schema, for a
// body type that has no name to build a value of (an operation's inline
// struct). The text must decode into t strictly (no unknown member): it
// panics otherwise.
func (s *Service) ExampleJSON(t reflect.Type, text string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(reflect.New(t).Interface()); err != nil {
		panic("httpx: example of " + t.String() + ": " + err.Error())
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		panic("httpx: example of " + t.String() + ": " + err.Error())
	}
	if s.examples == nil {
		s.examples = map[reflect.Type]any{}
	}
	s.examples[t] = v
}

// ExampleOf returns the example given for type t, if any.
func (s *Service) ExampleOf(t reflect.Type) (any, bool) {
	v, ok := s.examples[t]
	return v, ok
}

// writeExamples puts each example into its type's schema.
func (s *Service) writeExamples() {
	reg := s.API.OpenAPI().Components.Schemas
	for t, v := range s.examples {
		name := ""
		for n := range reg.Map() {
			if reg.TypeFromRef("#/components/schemas/"+n) == t {
				name = n
				break
			}
		}
		if name == "" {
			panic("httpx: an example is given for " + t.String() + ", which no operation of the " + s.Name + " service uses")
		}
		reg.Map()[name].Examples = []any{v}
	}
}

// nullStructs makes the document say what the encoder writes: a field that
// points to a struct and is not omitempty is written as null when nil, so
// its property is oneOf the object and null (huma marks pointers to
// scalars nullable itself, and cannot do it for an object reference).
func (s *Service) nullStructs() {
	reg := s.API.OpenAPI().Components.Schemas
	var fields func(t reflect.Type, sc *huma.Schema)
	fields = func(t reflect.Type, sc *huma.Schema) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				fields(f.Type, sc)
				continue
			}
			if name == "" || name == "-" || strings.Contains(","+opts+",", ",omitempty,") ||
				f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
				continue
			}
			if ps := sc.Properties[name]; ps != nil && ps.Ref != "" {
				sc.Properties[name] = &huma.Schema{Description: ps.Description, OneOf: []*huma.Schema{{Ref: ps.Ref}, {Type: "null"}}}
			}
		}
	}
	for name, sc := range reg.Map() {
		if t := reg.TypeFromRef("#/components/schemas/" + name); t != nil && t.Kind() == reflect.Struct {
			fields(t, sc)
		}
	}
}

// finishRegistration runs once every operation is registered.
func (s *Service) finishRegistration() {
	s.nullStructs()
	s.writeExamples()
	s.documentDefaultLimits()
	s.boundStrings()
	s.noteResponseTypes()
}

// noteResponseTypes keeps each operation's success media types in its
// metadata once huma has filled in its responses, so the guard's Accept
// check reads them instead of working them out on every request.
func (s *Service) noteResponseTypes() {
	for _, item := range s.API.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op != nil && op.Metadata != nil {
				op.Metadata[metaRespTypes] = responseTypes(op)
			}
		}
	}
}

// boundStrings gives every string of a request (body and parameters) that
// is bounded in no other way (maxLength, enum, a date or time format) the service's
// MaxStringLength, in the shared schemas huma
// validates with, so the limit is both documented and enforced.
func (s *Service) boundStrings() {
	if s.opts.MaxStringLength <= 0 {
		return
	}
	reg := s.API.OpenAPI().Components.Schemas
	seen := map[*huma.Schema]bool{}
	var walk func(*huma.Schema)
	walk = func(sc *huma.Schema) {
		if sc == nil || seen[sc] {
			return
		}
		seen[sc] = true
		if sc.Ref != "" {
			walk(reg.SchemaFromRef(sc.Ref))
			return
		}
		timeFormat := sc.Format == "date" || sc.Format == "date-time" || sc.Format == "time"
		if sc.Type == "string" && sc.MaxLength == nil && len(sc.Enum) == 0 && !timeFormat {
			sc.MaxLength = ptr(s.opts.MaxStringLength)
			sc.PrecomputeMessages()
		}
		for _, p := range sc.Properties {
			walk(p)
		}
		walk(sc.Items)
		if ap, ok := sc.AdditionalProperties.(*huma.Schema); ok {
			walk(ap)
		}
		for _, list := range [][]*huma.Schema{sc.OneOf, sc.AnyOf, sc.AllOf} {
			for _, x := range list {
				walk(x)
			}
		}
	}
	for _, item := range s.API.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			// Parameters too (issue 12): path, query and header strings
			// are bounded like body strings; the guard checks path and
			// header ones before huma sees them.
			for _, p := range op.Parameters {
				walk(p.Schema)
			}
			if op.RequestBody == nil {
				continue
			}
			for _, mt := range op.RequestBody.Content {
				walk(mt.Schema)
			}
		}
	}
}

// documentDefaultLimits documents the default body limit of operations that
// take a body and were not registered through Register (the OAuth token
// endpoint) or whose body was described after (the streamed file bodies).
func (s *Service) documentDefaultLimits() {
	for path, item := range s.API.OpenAPI().Paths {
		for method, op := range map[string]*huma.Operation{http.MethodPost: item.Post, http.MethodPut: item.Put, http.MethodPatch: item.Patch} {
			if op == nil || op.RequestBody == nil || op.Extensions["x-body-limit"] != nil {
				continue
			}
			limit := s.limits.bodyLimit(method + " " + path)
			documentLimits(s, method, path, limit, true, s.limits.heavy[method+" "+path])
		}
	}
}

// documentLimits writes an operation's body limit and heavy-work limit into
// the OpenAPI document: x-body-limit with the 413 and 408 answers for an
// operation that takes a body (or declares a limit, for a body it reads
// itself), the 503 server_busy answer for a heavy one. huma only adds its
// default error response to operations without other responses, so these
// go in after registration.
func documentLimits(s *Service, method, path string, limit int64, declared, heavy bool) {
	item := s.API.OpenAPI().Paths[path]
	if item == nil {
		return
	}
	var op *huma.Operation
	switch method {
	case http.MethodPost:
		op = item.Post
	case http.MethodPut:
		op = item.Put
	case http.MethodPatch:
		op = item.Patch
	case http.MethodDelete:
		op = item.Delete
	}
	if op == nil || (op.RequestBody == nil && !declared) {
		return
	}
	problem := s.problemResponse
	if op.Extensions == nil {
		op.Extensions = map[string]any{}
	}
	op.Extensions["x-body-limit"] = limit
	if op.Responses == nil {
		op.Responses = map[string]*huma.Response{}
	}
	op.Responses["413"] = problem("payload_too_large: the body is larger than " + strconv.FormatInt(limit, 10) + " bytes (x-body-limit).")
	op.Responses["408"] = problem("request_timeout: the body did not arrive within the server's read timeout.")
	if heavy {
		r := problem("server_busy: the service is running as many file and batch requests as it allows; retry after Retry-After seconds.")
		r.Headers = map[string]*huma.Param{"Retry-After": {Description: "Seconds to wait before retrying.", Schema: &huma.Schema{Type: "integer"}}}
		op.Responses["503"] = r
	}
}

func ptr[T any](v T) *T { return &v }

// guard is the huma middleware that authenticates, checks scope and company,
// limits the rate and applies idempotency, in that order.
func (s *Service) guard(ctx huma.Context, next func(huma.Context)) {
	op := ctx.Operation()
	r, w := humago.Unwrap(ctx)
	mode, _ := op.Metadata[metaAuth].(string)
	idempotent := r.Method == http.MethodPost && op.Metadata[metaIdempotency] != "none"
	if accept := strings.Join(r.Header.Values("Accept"), ","); accept != "" {
		if types, _ := op.Metadata[metaRespTypes].([]string); !acceptable(accept, types) {
			WriteProblem(w, r, NewProblem("not_acceptable", "This operation answers with "+strings.Join(types, " or ")+", which the Accept header does not admit."))
			return
		}
	}
	if mode == AuthNone {
		if perr := checkRequestText(r, op, s.opts.MaxStringLength); perr != nil {
			WriteProblem(w, r, perr)
			return
		}
		if idempotent {
			s.idempotent(ctx, r, w, nil, op, next)
			return
		}
		next(ctx)
		return
	}
	p, err := s.authenticate(r, mode)
	if err != nil {
		// The challenge names the scheme the operation takes (RFC 9110
		// §11.6.1): an agent's, a key's, or either.
		switch mode {
		case AuthAgent:
			w.Header().Set("WWW-Authenticate", `Agent realm="denar"`)
		case AuthSigner:
			w.Header().Set("WWW-Authenticate", `Agent realm="denar", Bearer realm="denar"`)
		}
		var other *auth.OtherServiceError
		if errors.As(err, &other) {
			WriteProblem(w, r, s.otherService(other.Service))
			return
		}
		WriteProblem(w, r, FromError(err))
		return
	}
	if scope, _ := op.Metadata[metaScope].(string); scope != "" && p.Kind != auth.KindAgent && !p.HasScope(scope) {
		or, _ := op.Metadata[metaOrScope].(string)
		if or == "" || !p.HasScope(or) {
			need := scope
			if or != "" {
				need += " or " + or
			}
			WriteProblem(w, r, NewProblem("insufficient_scope", "This operation needs the scope "+need+", which the credential does not carry."))
			return
		}
	}
	if p.Environment == auth.EnvProduction && p.Kind != auth.KindAgent && !p.ProductionEnabled {
		WriteProblem(w, r, NewProblem("production_not_enabled", "The account has no active production plan; use a sandbox key or upgrade the plan."))
		return
	}
	if wait, ok := s.limiter.allow(r.Context(), p.CredentialID); !ok {
		rateLimited(w, r, wait, "credential")
		return
	}
	// Before X-Company-Id is looked up and anything reaches the store.
	if perr := checkRequestText(r, op, s.opts.MaxStringLength); perr != nil {
		WriteProblem(w, r, perr)
		return
	}
	c := huma.WithValue(ctx, principalKey, p)
	if company, _ := op.Metadata[metaCompany].(bool); company {
		id, perr := s.resolveCompany(r, p)
		if perr != nil {
			WriteProblem(w, r, perr)
			return
		}
		c = huma.WithValue(c, companyKey, id)
	} else if opt, _ := op.Metadata[metaCompanyOpt].(bool); opt && strings.TrimSpace(r.Header.Get("X-Company-Id")) != "" {
		id, perr := s.resolveCompany(r, p)
		if perr != nil {
			WriteProblem(w, r, perr)
			return
		}
		c = huma.WithValue(c, companyKey, id)
	}
	if idempotent {
		s.idempotent(c, r, w, p, op, next)
		return
	}
	next(c)
}

// authenticate reads the credential an operation's mode accepts: an API key
// or access token (Bearer), a signing agent's (Agent), or either for the
// signer operations.
func (s *Service) authenticate(r *http.Request, mode string) (*auth.Principal, error) {
	h := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(h, " ")
	secret = strings.TrimSpace(secret)
	switch {
	case ok && strings.EqualFold(scheme, "Agent") && (mode == AuthAgent || mode == AuthSigner) && s.opts.Agents != nil:
		id, sec, found := strings.Cut(secret, ".")
		if !found || !credentialText(id) || !credentialText(sec) {
			return nil, auth.ErrUnauthenticated
		}
		return s.opts.Agents.AuthenticateAgent(r.Context(), id, sec)
	case ok && strings.EqualFold(scheme, "Bearer") && (mode == AuthKey || mode == AuthSigner):
		// Bytes no issued secret has are refused here, before any query.
		if !credentialText(secret) {
			return nil, auth.ErrUnauthenticated
		}
		return s.opts.Auth.Authenticate(r.Context(), s.Name, secret)
	}
	if mode == AuthAgent {
		return nil, errAgentCredential
	}
	return nil, auth.ErrUnauthenticated
}

// serviceNames name the services in messages.
var serviceNames = map[string]string{auth.ServicePayroll: "payroll and filing", auth.ServiceEInvoice: "e-invoicing"}

// otherService is the 401 to a credential of service, not this one: which
// service it belongs to and where that one listens.
func (s *Service) otherService(service string) *Problem {
	msg := "This credential belongs to the " + serviceNames[service] + " service"
	if u := s.opts.ServiceURLs[service]; u != "" {
		msg += ", which listens at " + u
	}
	msg += "; this is the " + serviceNames[s.Name] + " service. Send the request there, or use a credential of this service (denar admin key create --service " + s.Name + ")."
	return NewProblem("unauthenticated", msg)
}

var errAgentCredential = denar.Errorf("unauthenticated", "Send Authorization: Agent <AGENT_ID>.<AGENT_SECRET> as printed by denar-agent pair.")

// PrincipalFrom returns the authenticated principal of a request.
func PrincipalFrom(ctx context.Context) *auth.Principal {
	p, _ := ctx.Value(principalKey).(*auth.Principal)
	return p
}

// CompanyFrom returns the company the request acts for ("" when the
// credential reaches no company and none was named).
func CompanyFrom(ctx context.Context) string {
	id, _ := ctx.Value(companyKey).(string)
	return id
}

// resolveCompany applies the X-Company-Id rules: a named company must be
// one of the service's companies in the account, in the credential's
// environment and allow-list; without the header, the credential's only
// company is used, and a credential that reaches several must name one.
func (s *Service) resolveCompany(r *http.Request, p *auth.Principal) (string, *Problem) {
	named := strings.TrimSpace(r.Header.Get("X-Company-Id"))
	if named != "" {
		if !p.AllowsCompany(named) {
			return "", NewProblem("company_not_allowed", "The credential may not act for company "+named+".")
		}
		env, ok, err := s.opts.Companies.CompanyEnvironment(r.Context(), p, named)
		if err != nil {
			return "", FromError(err)
		}
		if !ok {
			return "", NewProblem("company_not_allowed", "The credential may not act for company "+named+".")
		}
		if env != p.Environment {
			return "", NewProblem("environment_mismatch", "Company "+named+" belongs to "+env+"; this is a "+p.Environment+" credential.")
		}
		return named, nil
	}
	reachable := p.CompanyIDs
	if len(reachable) == 0 {
		ids, err := s.opts.Companies.CompanyIDs(r.Context(), p, 2)
		if err != nil {
			return "", FromError(err)
		}
		reachable = ids
	}
	switch len(reachable) {
	case 0:
		return "", nil
	case 1:
		return reachable[0], nil
	}
	return "", s.companyRequired(r, p)
}

// fewCompanies is how many companies company_required lists.
const fewCompanies = 5

// companyRequired is the 400 to a request that names no company of the
// several its credential reaches: their ids when they are few, else how
// to find them.
func (s *Service) companyRequired(r *http.Request, p *auth.Principal) *Problem {
	ids := p.CompanyIDs
	if len(ids) == 0 {
		var err error
		if ids, err = s.opts.Companies.CompanyIDs(r.Context(), p, fewCompanies+1); err != nil {
			ids = nil
		}
	}
	msg := "The credential reaches more than one company; name one in the X-Company-Id header"
	if len(ids) > 1 && len(ids) <= fewCompanies {
		msg += ": " + strings.Join(ids, ", ") + "."
	} else if s.Name == auth.ServiceEInvoice {
		msg += " (GET /v1/companies lists their ids)."
	} else {
		msg += " (the ids denar admin company create printed for the account's employers)."
	}
	return NewProblem("company_required", msg)
}
