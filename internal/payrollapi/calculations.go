package payrollapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/payroll"
)

// MaxBatch is the most inputs one batch calculation takes.
const MaxBatch = 500

type calculateInput struct {
	Body payroll.Input
}

type calculateOutput struct {
	Body *payroll.Result
}

type batchInput struct {
	Body struct {
		Inputs []payroll.Input `json:"inputs" minItems:"1" maxItems:"500" doc:"1 to 500 calculations."`
	}
}

// BatchResults is the documented shape of a batch answer. The handler
// writes the same JSON itself (batchOutput) because encoding 500 results
// through reflection and re-compacting them was most of the request's time.
type BatchResults struct {
	Data []*payroll.Result `json:"data" doc:"One result per input, in input order."`
}

type batchOutput struct {
	ContentType string `header:"Content-Type"`
	Body        []byte
}

type convertInput struct {
	Body struct {
		Gross         *string                    `json:"gross,omitempty" doc:"Base gross to convert to net. Give gross or net."`
		Net           *string                    `json:"net,omitempty" doc:"Agreed net to convert to the statutory gross."`
		Contractor    bool                       `json:"contractor,omitempty"`
		RateOverrides map[string]json.RawMessage `json:"rateOverrides,omitempty"`
		EffectiveDate *string                    `json:"effectiveDate,omitempty" doc:"YYYY-MM-DD; default today in Europe/Skopje."`
	}
}

type convertOutput struct {
	Body struct {
		Gross         string `json:"gross"`
		Net           string `json:"net"`
		Contractor    bool   `json:"contractor"`
		EffectiveDate string `json:"effectiveDate"`
	}
}

type ratesInput struct {
	Date string `query:"date" doc:"YYYY-MM-DD; default today in Europe/Skopje."`
}

type ratesOutput struct {
	Body struct {
		EffectiveDate string            `json:"effectiveDate"`
		Rates         map[string]string `json:"rates" doc:"Every rate key with a known value on the date, as decimal text: percentages for pension, health, additionalHealth, employment, pit; denars for personalAllowance, averageSalary, minBase, maxBase."`
	}
}

type historyOutput struct {
	Body struct {
		Data []payroll.History `json:"data"`
	}
}

func (h *handlers) registerCalculations(s *httpx.Service) {
	// Hours and rates are exact decimals that travel as JSON numbers.
	s.API.OpenAPI().Components.Schemas.RegisterTypeAlias(reflect.TypeFor[payroll.Number](), reflect.TypeFor[float64]())
	httpx.Register(s, huma.Operation{
		OperationID: "calculate", Method: http.MethodPost, Path: "/v1/calculations",
		Summary: "Calculate one month's payroll", Tags: []string{"Calculations"},
		Description: "Gross to net (or, with targetNet, net to gross) for one employee and month under rules R1–R12.",
	}, httpx.Spec{Scope: "calculations:write", Company: true}, h.calculate)
	httpx.Register(s, huma.Operation{
		OperationID: "calculateBatch", Method: http.MethodPost, Path: "/v1/calculations/batch",
		Summary: "Calculate up to 500 months at once", Tags: []string{"Calculations"},
		Responses: map[string]*huma.Response{"200": {Description: "One result per input, in input order.",
			Content: map[string]*huma.MediaType{"application/json": {
				Schema: s.API.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[BatchResults](), true, "")}}}},
	}, httpx.Spec{Scope: "calculations:write", Company: true, MaxBodyBytes: 8 << 20, Heavy: true}, h.batch)
	httpx.Register(s, huma.Operation{
		OperationID: "convert", Method: http.MethodPost, Path: "/v1/calculations/convert",
		Summary: "Convert between a base gross and net", Tags: []string{"Calculations"},
	}, httpx.Spec{Scope: "calculations:write", Company: true}, h.convert)
	httpx.Register(s, huma.Operation{
		OperationID: "getRates", Method: http.MethodGet, Path: "/v1/rates",
		Summary: "Statutory rates in force on a date", Tags: []string{"Rates"},
	}, httpx.Spec{Scope: "rates:read"}, h.rates)
	httpx.Register(s, huma.Operation{
		OperationID: "getRateHistory", Method: http.MethodGet, Path: "/v1/rates/history",
		Summary: "Every version of every rate key, with its source", Tags: []string{"Rates"},
	}, httpx.Spec{Scope: "rates:read"}, h.history)
}

func (h *handlers) calculate(ctx context.Context, in *calculateInput) (*calculateOutput, error) {
	r, err := payroll.Calculate(&in.Body, h.now())
	if err != nil {
		return nil, err
	}
	return &calculateOutput{Body: r}, nil
}

func (h *handlers) batch(ctx context.Context, in *batchInput) (*batchOutput, error) {
	inputs := in.Body.Inputs
	if len(inputs) == 0 || len(inputs) > MaxBatch {
		return nil, denar.Invalid(denar.FieldError{Path: "inputs", Message: fmt.Sprintf("give 1 to %d inputs", MaxBatch)})
	}
	now := h.now()
	results := make([]*payroll.Result, len(inputs))
	var fields []denar.FieldError
	for i := range inputs {
		r, err := payroll.Calculate(&inputs[i], now)
		if err != nil {
			fields = append(fields, prefixed(fmt.Sprintf("inputs[%d]", i), err)...)
			continue
		}
		results[i] = r
	}
	if len(fields) > 0 {
		return nil, denar.Invalid(fields...)
	}
	body := make([]byte, 0, len(results)*1600+16)
	body = append(body, `{"data":[`...)
	for i, r := range results {
		if i > 0 {
			body = append(body, ',')
		}
		body = r.AppendJSON(body)
	}
	body = append(body, "]}\n"...)
	return &batchOutput{ContentType: "application/json", Body: body}, nil
}

// prefixed moves the field errors of one batch input under its index.
func prefixed(prefix string, err error) []denar.FieldError {
	e, ok := err.(*denar.Error)
	if !ok || len(e.Fields) == 0 {
		return []denar.FieldError{{Path: prefix, Message: err.Error()}}
	}
	out := make([]denar.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		f.Path = prefix + "." + f.Path
		out[i] = f
	}
	return out
}

func (h *handlers) convert(ctx context.Context, in *convertInput) (*convertOutput, error) {
	b := in.Body
	if (b.Gross == nil) == (b.Net == nil) {
		return nil, denar.Invalid(denar.FieldError{Path: "gross", Message: "give exactly one of gross and net"})
	}
	calc := payroll.Input{GrossSalary: b.Gross, TargetNet: b.Net, Contractor: b.Contractor, EffectiveDate: b.EffectiveDate}
	if len(b.RateOverrides) > 0 {
		calc.RateOverrides = map[string]json.RawMessage{}
		for k, v := range b.RateOverrides {
			calc.RateOverrides[k] = v
		}
	}
	r, err := payroll.Calculate(&calc, h.now())
	if err != nil {
		e, ok := err.(*denar.Error)
		if ok {
			for i := range e.Fields {
				switch e.Fields[i].Path {
				case "grossSalary":
					e.Fields[i].Path = "gross"
				case "targetNet":
					e.Fields[i].Path = "net"
				}
			}
		}
		return nil, err
	}
	out := &convertOutput{}
	out.Body.Gross, out.Body.Net, out.Body.Contractor = r.SalaryGross, r.SalaryNet, b.Contractor
	out.Body.EffectiveDate = payroll.Today(h.now()).Format(time.DateOnly)
	if b.EffectiveDate != nil {
		out.Body.EffectiveDate = *b.EffectiveDate
	}
	return out, nil
}

func (h *handlers) rates(ctx context.Context, in *ratesInput) (*ratesOutput, error) {
	d := payroll.Today(h.now())
	if in.Date != "" {
		t, err := time.Parse(time.DateOnly, in.Date)
		if err != nil || t.Year() < 2009 {
			return nil, denar.Invalid(denar.FieldError{Path: "query.date", Message: "must be a date YYYY-MM-DD from 2009 on"})
		}
		d = t
	}
	out := &ratesOutput{}
	out.Body.EffectiveDate = d.Format(time.DateOnly)
	out.Body.Rates = payroll.RatesOn(d)
	return out, nil
}

func (h *handlers) history(ctx context.Context, _ *struct{}) (*historyOutput, error) {
	out := &historyOutput{}
	out.Body.Data = payroll.RateHistory()
	return out, nil
}
