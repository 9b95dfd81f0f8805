package payrollapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/filing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/money"
	"github.com/denar-mk/denar/payroll"
)

// statutory adapts the payroll engine's tables to the filing checks, so
// both read the same figures (R6: the checks use the rates in force on the
// last day of the filing period).
type statutory struct{}

func (statutory) On(d time.Time) (filing.Rates, error) {
	rates := payroll.RatesOn(d)
	if rates[payroll.KeyPension] == "" {
		return filing.Rates{}, errors.New("no contribution rates on " + d.Format(time.DateOnly))
	}
	amount := func(k string) money.Amount {
		v, _ := money.Parse(rates[k])
		return v
	}
	// 18.8 % is 0.188, exactly.
	pct := func(k string) money.Amount { v := amount(k); return v.Div(money.FromInt(100), v.Scale()+2) }
	return filing.Rates{
		Pension: pct(payroll.KeyPension), Health: pct(payroll.KeyHealth),
		Injury: pct(payroll.KeyAdditionalHealth), Employment: pct(payroll.KeyEmployment),
		Allowance: amount(payroll.KeyPersonalAllowance),
		// The engine takes contributions on the actual gross and reports the
		// minimum-base shortfall as separate top-ups; the cap applies as
		// published, prorated by paid hours in the checks as in the engine.
		MaxBase:     amount(payroll.KeyMaxBase),
		Provisional: provisionalKeys(d),
	}, nil
}

// provisionalKeys are the keys of the figures carried forward on d.
func provisionalKeys(d time.Time) []string {
	var keys []string
	for _, p := range payroll.ProvisionalOn(d) {
		keys = append(keys, p.Key)
	}
	return keys
}

// MaxFileBody is the body limit of the file endpoints (МПИН validate, XML,
// TXT and combined TXT, ПДД-ГИ, е-ППД): it holds about 10,700 МПИН records
// with every field present and names as long as the TXT allows, 63,000
// with only the required fields (go run ./cmd/denar-load -files). Requests
// of that size are worked out and answered in bounded memory
// (docs/filing-formats.md §6).
const MaxFileBody = 16 << 20

// fileInput streams the body: the filing package decodes it as it arrives
// (an МПИН request record by record) and reports every bad field with its
// path. With no Body or RawBody field huma leaves the body unread; the
// service's body limit still applies (httpx reads it through
// http.MaxBytesReader).
type fileInput struct {
	body io.Reader
}

// Resolve takes the request body for the handler.
func (in *fileInput) Resolve(ctx huma.Context) []error {
	in.body = ctx.BodyReader()
	return nil
}

// fileOutput is a generated file, written to the client as it is rendered
// (filing.File): an МПИН file of the largest admitted request is tens of
// megabytes, which the service never holds whole.
type fileOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               func(huma.Context)
}

func fileResponse(contentType string, f *filing.File) *fileOutput {
	return &fileOutput{ContentType: contentType, ContentDisposition: filing.ContentDisposition(f.Name),
		Body: func(ctx huma.Context) {
			ctx.SetStatus(http.StatusOK)
			// A write fails only when the client went away: nothing is
			// left to tell it.
			_, _ = f.WriteTo(ctx.BodyWriter())
		}}
}

// ValidationResult is the validate endpoint's body (filing.Result under a
// name that does not clash with payroll.Result in the OpenAPI document).
type ValidationResult struct {
	OK     bool           `json:"ok" doc:"True when no issue blocks generation."`
	Issues []filing.Issue `json:"issues" doc:"Every finding: severity error (blocks) or warning, code (UJP's number where one exists), МПИН field, path and message."`
}

type validateOutput struct {
	Body ValidationResult
}

type grossFromNetOutput struct {
	Body *filing.GrossFromNetResponse
}

func (h *handlers) registerFiles(s *httpx.Service) {
	reg := s.API.OpenAPI().Components.Schemas
	reg.RegisterTypeAlias(reflect.TypeFor[filing.Money](), reflect.TypeFor[string]())
	reg.RegisterTypeAlias(reflect.TypeFor[filing.Num](), reflect.TypeFor[float64]())
	spec := httpx.Spec{Scope: "files:write", Company: true, MaxBodyBytes: MaxFileBody, Heavy: true, StreamedBody: true}
	file := func(id, path, summary, desc string, body any, mediaType string, fn func(context.Context, *fileInput) (*fileOutput, error)) {
		op := huma.Operation{OperationID: id, Method: http.MethodPost, Path: path, Summary: summary, Description: desc,
			Tags:      []string{"Files"},
			Responses: map[string]*huma.Response{"200": {Description: "The file.", Content: map[string]*huma.MediaType{mediaType: {Schema: &huma.Schema{Type: "string", Format: "binary"}}}}}}
		httpx.Register(s, op, spec, fn)
		if strings.Contains(path, "/mpin/") {
			documentBody(s, path, body, filing.CodeMpinValidationFailed)
		} else {
			documentBody(s, path, body)
		}
	}
	file("mpinXML", "/v1/files/mpin/xml", "МПИН as XML",
		"The monthly МПИН filing in the XML layout UJP accepts. Runs the validate checks first: 422 mpin_validation_failed lists the blocking issues unless force is true.",
		filing.MpinRequest{}, "application/xml", h.mpinXML)
	file("mpinTXT", "/v1/files/mpin/txt", "МПИН as legacy fixed-width TXT",
		"UTF-16LE with a byte-order mark and CRLF line endings (docs/filing-formats.md). Same 422 rule as the XML.",
		filing.MpinRequest{}, "text/plain", h.mpinTXT)
	file("mpinTXTCombined", "/v1/files/mpin/txt/combined", "Several МПИН batches of one payer and period as one TXT",
		"Records ordered by Cyrillic surname under Macedonian collation; totals summed from the records.",
		filing.CombinedRequest{}, "text/plain", h.combined)
	file("pddgi", "/v1/files/pddgi", "ПДД-ГИ XML for contractor payments",
		"10% PIT on contractor payments of a payroll batch: no contributions, no allowance.", filing.PddgiRequest{}, "application/xml", h.pddgi)
	file("epdd", "/v1/files/epdd", "е-ППД XML", "Personal income tax on a payment outside any payroll batch.",
		filing.EppdRequest{}, "application/xml", h.epdd)
	httpx.Register(s, huma.Operation{OperationID: "mpinValidate", Method: http.MethodPost, Path: "/v1/files/mpin/validate",
		Summary: "Run the МПИН checks without producing a file", Tags: []string{"Files"},
		Description: "The same checks as the МПИН files run, answered as {ok, issues} instead of a file."}, spec, h.validate)
	documentBody(s, "/v1/files/mpin/validate", filing.MpinRequest{})
	httpx.Register(s, huma.Operation{OperationID: "epddGrossFromNet", Method: http.MethodPost, Path: "/v1/files/epdd/gross-from-net",
		Summary: "Gross up a net payment for е-ППД", Tags: []string{"Files"},
		Description: "The gross income whose personal income tax leaves the given net, for an е-ППД row: the flat 10% tax after the sub-type's normative costs."}, httpx.Spec{Scope: "files:write", Company: true, StreamedBody: true}, h.grossFromNet)
	documentBody(s, "/v1/files/epdd/gross-from-net", filing.GrossFromNetRequest{})
}

// documentBody writes the request body of a streamed operation into the
// OpenAPI document (the JSON schema of the type the handler decodes),
// and documents the 422 problem codes of the operation (docs/errors.md).
func documentBody(s *httpx.Service, path string, body any, codes ...string) {
	item := s.API.OpenAPI().Paths[path]
	if item == nil || item.Post == nil {
		return
	}
	schema := s.API.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(body), true, "")
	item.Post.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {Schema: schema}}}
	codes = append([]string{denar.ECodeValidation}, codes...)
	desc := "A problem with code " + strings.Join(codes, " or ") + " (docs/errors.md): every wrong field is in errors with its path"
	if len(codes) > 1 {
		desc += "; the blocking МПИН issues are also in issues"
	}
	if item.Post.Responses == nil {
		item.Post.Responses = map[string]*huma.Response{}
	}
	// The problem's schema is the one the plumbing documents for every
	// error of the operation.
	var problem *huma.Schema
	if d := item.Post.Responses["default"]; d != nil && d.Content["application/problem+json"] != nil {
		problem = d.Content["application/problem+json"].Schema
	}
	item.Post.Responses["422"] = &huma.Response{Description: desc + ".",
		Content: map[string]*huma.MediaType{"application/problem+json": {Schema: problem}}}
	if item.Post.Extensions == nil {
		item.Post.Extensions = map[string]any{}
	}
	item.Post.Extensions["x-problem-codes"] = codes
}

// nullable marks properties of a registered schema as accepting null, as
// the spec says they do: a property holding a $ref (an object) becomes
// oneOf the object and null, any other gets type [T, "null"]. huma's
// nullable tag does not reach object references.
func nullable(s *httpx.Service, schema string, props ...string) {
	sc := s.API.OpenAPI().Components.Schemas.Map()[schema]
	if sc == nil {
		panic("payrollapi: no schema " + schema)
	}
	for _, name := range props {
		ps := sc.Properties[name]
		if ps == nil {
			panic("payrollapi: schema " + schema + " has no property " + name)
		}
		if ps.Ref != "" {
			sc.Properties[name] = &huma.Schema{Description: ps.Description, OneOf: []*huma.Schema{{Ref: ps.Ref}, {Type: "null"}}}
			continue
		}
		ps.Nullable = true
	}
}

// fail turns an error of the domain into the service's problem, worded
// alike on every endpoint and as the plumbing words its own: a validation
// problem's detail is "The request has invalid fields." and every field is
// in errors with its path; the МПИН blocking issues keep their own member,
// issues, and are listed in errors too.
func fail(ctx context.Context, err error) error {
	var b *filing.BlockingError
	if errors.As(err, &b) {
		err = b.AsDenarError()
	}
	var de *denar.Error
	if !errors.As(err, &de) {
		return err
	}
	detail := de.Message
	if de.Code == denar.ECodeValidation {
		detail = "The request has invalid fields."
	}
	p := httpx.NewProblem(de.Code, detail, de.Fields...)
	if len(de.Detail) > 0 {
		p.Extra = de.Detail
	}
	p.Instance = httpx.RequestID(ctx)
	return p
}

func (h *handlers) mpinXML(ctx context.Context, in *fileInput) (*fileOutput, error) {
	f, err := filing.MpinXMLFrom(in.body, statutory{})
	if err != nil {
		return nil, fail(ctx, err)
	}
	return fileResponse("application/xml; charset=utf-8", f), nil
}

func (h *handlers) mpinTXT(ctx context.Context, in *fileInput) (*fileOutput, error) {
	f, err := filing.MpinTXTFrom(in.body, statutory{})
	if err != nil {
		return nil, fail(ctx, err)
	}
	return fileResponse("text/plain; charset=utf-16le", f), nil
}

func (h *handlers) combined(ctx context.Context, in *fileInput) (*fileOutput, error) {
	f, err := filing.CombinedTXTFrom(in.body, statutory{})
	if err != nil {
		return nil, fail(ctx, err)
	}
	return fileResponse("text/plain; charset=utf-16le", f), nil
}

func (h *handlers) pddgi(ctx context.Context, in *fileInput) (*fileOutput, error) {
	var req filing.PddgiRequest
	if err := filing.DecodeJSONFrom(in.body, &req); err != nil {
		return nil, fail(ctx, err)
	}
	f, err := filing.PddgiFile(&req)
	if err != nil {
		return nil, fail(ctx, err)
	}
	return fileResponse("application/xml; charset=utf-8", f), nil
}

func (h *handlers) epdd(ctx context.Context, in *fileInput) (*fileOutput, error) {
	var req filing.EppdRequest
	if err := filing.DecodeJSONFrom(in.body, &req); err != nil {
		return nil, fail(ctx, err)
	}
	f, err := filing.EppdFile(&req)
	if err != nil {
		return nil, fail(ctx, err)
	}
	return fileResponse("application/xml; charset=utf-8", f), nil
}

func (h *handlers) validate(ctx context.Context, in *fileInput) (*validateOutput, error) {
	res, err := filing.ValidateFrom(in.body, statutory{})
	if err != nil {
		return nil, fail(ctx, err)
	}
	return &validateOutput{Body: ValidationResult{OK: res.OK, Issues: res.Issues}}, nil
}

func (h *handlers) grossFromNet(ctx context.Context, in *fileInput) (*grossFromNetOutput, error) {
	var req filing.GrossFromNetRequest
	if err := filing.DecodeJSONFrom(in.body, &req); err != nil {
		return nil, fail(ctx, err)
	}
	res, err := filing.GrossFromNet(&req)
	if err != nil {
		return nil, fail(ctx, err)
	}
	return &grossFromNetOutput{Body: res}, nil
}
