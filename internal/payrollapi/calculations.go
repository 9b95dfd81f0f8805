package payrollapi

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/payroll"
)

// rawInput takes the request body as bytes: the payroll package decodes it
// strictly and reports every bad field with its path, in one answer for
// all inputs of a batch (huma's schema validation would stop at the
// schema and hide the domain's errors).
type rawInput struct {
	RawBody []byte
}

// calcInput is a calculation body with the explain switch.
type calcInput struct {
	Explain bool `query:"explain" doc:"true: the result carries explain, every line of the computation in order (formula, figures with their sources, rounding)."`
	RawBody []byte
}

// BatchResults is the documented shape of a batch answer.
type BatchResults struct {
	Data []*payroll.Result `json:"data" doc:"One result per input, in input order."`
}

type convertOutput struct {
	Body *payroll.ConvertResult
}

type ratesInput struct {
	Date string `query:"date" maxLength:"10" doc:"YYYY-MM-DD; default today in Europe/Skopje."`
}

type ratesOutput struct {
	Body struct {
		EffectiveDate string                `json:"effectiveDate" example:"2026-05-31" doc:"The date the rates are in force on, YYYY-MM-DD (the date asked for, else today in Europe/Skopje)."`
		Rates         map[string]string     `json:"rates" doc:"Every rate key with a known value on the date, as decimal text: percentages for pension, health, additionalHealth, employment, pit; denars for personalAllowance, averageSalary, minBase, maxBase."`
		Provisional   []payroll.Provisional `json:"provisional" doc:"Yearly figures of the date that are not published yet: the rates map carries the last published value, listed here with its source."`
	}
}

type historyOutput struct {
	Body struct {
		Data []payroll.History `json:"data" doc:"Every version of every rate key, by key and then date."`
	}
}

func (h *handlers) registerCalculations(s *httpx.Service) {
	// Hours and rates are exact decimals that travel as JSON numbers.
	s.API.OpenAPI().Components.Schemas.RegisterTypeAlias(reflect.TypeFor[payroll.Number](), reflect.TypeFor[float64]())
	jsonOut := func(t reflect.Type, desc string) map[string]*huma.Response {
		return map[string]*huma.Response{"200": {Description: desc, Content: map[string]*huma.MediaType{"application/json": {
			Schema: s.API.OpenAPI().Components.Schemas.Schema(t, true, "")}}}}
	}
	spec := httpx.Spec{Scope: "calculations:write", Company: true, RawBody: true}
	httpx.Register(s, huma.Operation{
		OperationID: "calculate", Method: http.MethodPost, Path: "/v1/calculations",
		Summary: "Calculate one month's payroll", Tags: []string{"Calculations"},
		Description: "Gross to net (or, with targetNet, net to gross) for one employee and month: contributions, personal allowance, PIT, premium hours, seniority, bonus and deductions, by the statutory rates in force (docs/payroll.md). ?explain=true adds every step of the computation.",
		Responses:   jsonOut(reflect.TypeFor[payroll.Result](), "The calculation."),
	}, spec, h.calculate)
	documentBody(s, "/v1/calculations", payroll.Input{})
	nullable(s, "Input", "seniority", "period", "placements", "deductions", "rateOverrides")
	httpx.Register(s, huma.Operation{
		OperationID: "calculateBatch", Method: http.MethodPost, Path: "/v1/calculations/batch",
		Summary: "Calculate up to 500 months at once", Tags: []string{"Calculations"},
		Description:  "One result per input, in input order. When any input is invalid, one 422 lists every problem of every input under inputs[i].",
		MaxBodyBytes: 8 << 20,
		Responses:    jsonOut(reflect.TypeFor[BatchResults](), "One result per input, in input order."),
	}, httpx.Spec{Scope: "calculations:write", Company: true, MaxBodyBytes: 8 << 20, Heavy: true, RawBody: true}, h.batch)
	documentBody(s, "/v1/calculations/batch", payroll.BatchInput{})
	httpx.Register(s, huma.Operation{
		OperationID: "convert", Method: http.MethodPost, Path: "/v1/calculations/convert",
		Summary: "Convert between a base gross and net", Tags: []string{"Calculations"},
		Description: "Give gross or net (one of them): the other figure, denar-exact, under the rates in force on effectiveDate.",
		Responses:   jsonOut(reflect.TypeFor[payroll.ConvertResult](), "Both figures and the date whose rates were used."),
	}, spec, h.convert)
	documentBody(s, "/v1/calculations/convert", payroll.ConvertInput{})
	httpx.Register(s, huma.Operation{
		OperationID: "getRates", Method: http.MethodGet, Path: "/v1/rates",
		Summary: "Statutory rates in force on a date", Tags: []string{"Rates"},
		Description: "Every statutory rate key with the value in force on date (default today), and its source.",
	}, httpx.Spec{Scope: "rates:read"}, h.rates)
	httpx.Register(s, huma.Operation{
		OperationID: "getRateHistory", Method: http.MethodGet, Path: "/v1/rates/history",
		Summary: "Every version of every rate key, with its source", Tags: []string{"Rates"},
		Description: "The full history of the statutory rates: each key's versions with the date each took effect and its source.",
	}, httpx.Spec{Scope: "rates:read"}, h.history)
}

func (h *handlers) calculate(ctx context.Context, in *calcInput) (*huma.StreamResponse, error) {
	buf := h.buffer()
	body, err := payroll.AppendCalculationJSON(buf.b[:0], in.RawBody, h.now(), in.Explain)
	if err != nil {
		h.release(buf)
		return nil, fail(ctx, err)
	}
	return h.send(buf, body), nil
}

func (h *handlers) batch(ctx context.Context, in *calcInput) (*huma.StreamResponse, error) {
	buf := h.buffer()
	body, err := payroll.AppendBatchJSON(buf.b[:0], in.RawBody, h.now(), in.Explain)
	if err != nil {
		h.release(buf)
		return nil, fail(ctx, err)
	}
	return h.send(buf, body), nil
}

// buffer is a response buffer from the handlers' free list: a 500-result
// batch answer is about 1.4 MB, which a fresh allocation would zero and the
// collector reclaim on every request (a sync.Pool is emptied by every
// collection, which such answers bring on often).
type buffer struct{ b []byte }

func (h *handlers) buffer() *buffer {
	select {
	case b := <-h.buffers:
		return b
	default:
		return &buffer{b: make([]byte, 0, 4096)}
	}
}

// release returns a buffer to the free list, unless it is full or the
// buffer outsized (larger than a batch answer needs).
func (h *handlers) release(b *buffer) {
	if cap(b.b) > 4<<20 {
		return
	}
	select {
	case h.buffers <- b:
	default:
	}
}

// send writes body with its length, then returns the buffer to the pool.
func (h *handlers) send(buf *buffer, body []byte) *huma.StreamResponse {
	return &huma.StreamResponse{Body: func(c huma.Context) {
		c.SetHeader("Content-Type", "application/json")
		c.SetHeader("Content-Length", strconv.Itoa(len(body)+1))
		c.SetStatus(http.StatusOK)
		w := c.BodyWriter()
		_, _ = w.Write(body)
		_, _ = w.Write([]byte{'\n'})
		buf.b = body[:0]
		h.release(buf)
	}}
}

func (h *handlers) convert(ctx context.Context, in *rawInput) (*convertOutput, error) {
	c, err := payroll.DecodeConvert(in.RawBody)
	if err != nil {
		return nil, fail(ctx, err)
	}
	r, err := payroll.Convert(c, h.now())
	if err != nil {
		return nil, fail(ctx, err)
	}
	return &convertOutput{Body: r}, nil
}

func (h *handlers) rates(ctx context.Context, in *ratesInput) (*ratesOutput, error) {
	d := payroll.Today(h.now())
	if in.Date != "" {
		t, err := time.Parse(time.DateOnly, in.Date)
		if err != nil || t.Year() < 2009 {
			return nil, fail(ctx, denar.Invalid(denar.FieldError{Path: "query.date", Message: "must be a date YYYY-MM-DD from 2009 on"}))
		}
		d = t
	}
	out := &ratesOutput{}
	out.Body.EffectiveDate = d.Format(time.DateOnly)
	out.Body.Rates = payroll.RatesOn(d)
	out.Body.Provisional = payroll.ProvisionalOn(d)
	return out, nil
}

func (h *handlers) history(ctx context.Context, _ *struct{}) (*historyOutput, error) {
	out := &historyOutput{}
	out.Body.Data = payroll.RateHistory()
	return out, nil
}
