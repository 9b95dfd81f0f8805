package payroll

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/jsontext"
	"github.com/denar-mk/denar/money"
)

// MaxBatch is the most inputs one batch calculation takes.
const MaxBatch = 500

// ConvertInput is the body of POST /v1/calculations/convert: a base salary
// (no special hours, no seniority, no bonus) given as gross or as net.
type ConvertInput struct {
	Gross         *string                    `json:"gross,omitempty" example:"30000" doc:"Base gross to convert to net, in denars, a decimal string. Give exactly one of gross and net."`
	Net           *string                    `json:"net,omitempty" example:"20533" doc:"Agreed net, in denars, to convert to the smallest whole-denar gross that pays it."`
	Contractor    bool                       `json:"contractor,omitempty" example:"false" doc:"A contract for work: a flat 10% PIT on the gross, no contributions (net = gross × 0.9)."`
	RateOverrides map[string]json.RawMessage `json:"rateOverrides,omitempty" doc:"Rate keys to override, as in CalculationInput."`
	EffectiveDate *string                    `json:"effectiveDate,omitempty" example:"2026-05-31" doc:"YYYY-MM-DD selecting the statutory rates in force; default today in Europe/Skopje."`
}

// ConvertResult is the answer of the convert endpoint: both figures in
// whole denars and the date whose rates were used.
type ConvertResult struct {
	Gross         money.Amount `json:"gross" example:"30000" doc:"The gross: as given, or the smallest whole-denar gross that pays the net."`
	Net           money.Amount `json:"net" example:"20533" doc:"The net of that gross, in whole denars."`
	Contractor    bool         `json:"contractor" example:"false" doc:"Whether the figures are a contractor's (flat 10% PIT)."`
	EffectiveDate string       `json:"effectiveDate" example:"2026-05-31" doc:"The date whose statutory rates were used, YYYY-MM-DD."`
	// As a calculation says it: a figure of the date not published yet was
	// carried forward.
	Provisional        bool          `json:"provisional" doc:"True when a statutory figure of the date is not published yet and the last published one was used."`
	ProvisionalFigures []Provisional `json:"provisionalFigures" doc:"The carried-forward figures the conversion used, with their sources."`
	Warnings           []Warning     `json:"warnings" doc:"Findings that do not stop the conversion (provisional_figure)."`
}

// Convert converts a base salary between gross and net. Given net, gross
// is the smallest whole-denar gross whose net reaches it and net is that
// gross's net (equal to the given net whenever some gross pays it exactly).
func Convert(in *ConvertInput, now time.Time) (*ConvertResult, error) {
	var fe denar.FieldErrors
	switch {
	case in.Gross == nil && in.Net == nil:
		fe.Add("gross", "give exactly one of gross and net")
		return nil, fe.Err()
	case in.Gross != nil && in.Net != nil:
		fe.Add("gross", "give exactly one of gross and net, not both")
		fe.Add("net", "give exactly one of gross and net, not both")
		return nil, fe.Err()
	}
	calc := Input{GrossSalary: in.Gross, TargetNet: in.Net, Contractor: in.Contractor,
		RateOverrides: in.RateOverrides, EffectiveDate: in.EffectiveDate}
	r, err := Calculate(&calc, now)
	if err != nil {
		var e *denar.Error
		if errors.As(err, &e) {
			for i, f := range e.Fields {
				switch f.Path {
				case "grossSalary":
					e.Fields[i].Path = "gross"
				case "targetNet":
					e.Fields[i].Path = "net"
				case KeyAverageSalary, KeyPersonalAllowance:
					// A figure the service does not know: convert takes
					// it only as a rate override.
					e.Fields[i] = denar.FieldError{Path: "rateOverrides." + f.Path,
						Message: strings.ReplaceAll(f.Message, "pass "+f.Path, "pass rateOverrides."+f.Path)}
				}
			}
		}
		return nil, err
	}
	date, _ := EffectiveDate(&calc, now)
	gross := r.SalaryGross
	if in.Gross != nil {
		// The caller's gross, as given: never rewritten (issue 16, defect 8).
		gross, _ = parseMoney(*in.Gross)
	}
	return &ConvertResult{Gross: gross, Net: r.SalaryNet, Contractor: in.Contractor,
		EffectiveDate: date.Format(time.DateOnly), Provisional: r.Provisional,
		ProvisionalFigures: r.ProvisionalFigures, Warnings: append([]Warning{}, r.Warnings...)}, nil
}

// BatchInput is the body of POST /v1/calculations/batch.
type BatchInput struct {
	Inputs []Input `json:"inputs" minItems:"1" maxItems:"500" doc:"1 to 500 calculations."`
}

// AppendBatchJSON decodes a batch body, calculates every input (with its
// explanation when explain is set) and appends {"data":[result, …]} to b. It reports in one error every problem
// of every input: the inputs are decoded one by one, so a malformed or
// unknown field in one input does not hide another input's errors.
func AppendBatchJSON(b []byte, body []byte, now time.Time, explain bool) ([]byte, error) {
	// The common case, a well-formed batch, is decoded as it is computed,
	// one input at a time into one Input; only a batch with a problem is
	// taken apart input by input to report every input's problems.
	if out, ok := appendBatchFast(b, body, now, explain); ok {
		return out, nil
	}
	var raw struct {
		Inputs []json.RawMessage `json:"inputs"`
	}
	if err := jsontext.DecodeJSON(body, &raw); err != nil {
		return b, err
	}
	if raw.Inputs == nil {
		return b, denar.Invalid(denar.FieldError{Path: "inputs", Message: "is required"})
	}
	if len(raw.Inputs) == 0 || len(raw.Inputs) > MaxBatch {
		return b, denar.Invalid(denar.FieldError{Path: "inputs", Message: fmt.Sprintf("give 1 to %d inputs (got %d)", MaxBatch, len(raw.Inputs))})
	}
	start := len(b)
	b = append(b, `{"data":[`...)
	var fields []denar.FieldError
	var in Input
	for i, r := range raw.Inputs {
		in = Input{}
		err := jsontext.DecodeJSON(r, &in)
		if err == nil {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = AppendCalculation(b, &in, now, explain); err == nil {
				continue
			}
		} else if lenient, lerr := decodeLenient(r); lerr == nil {
			// Decoded leniently: the domain's checks run too, so the answer
			// lists this input's every problem.
			_, cerr := Calculate(lenient, now)
			err = merge(err, cerr)
		}
		fields = append(fields, Prefixed(fmt.Sprintf("inputs[%d]", i), err)...)
	}
	if len(fields) > 0 {
		return b[:start], denar.Invalid(fields...)
	}
	return append(b, "]}"...), nil
}

// Prefixed moves the field errors of err under prefix ("inputs[7]" turns
// "grossSalary" into "inputs[7].grossSalary"). An error without fields
// becomes one field error at prefix.
func Prefixed(prefix string, err error) []denar.FieldError {
	var e *denar.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return []denar.FieldError{{Path: prefix, Message: err.Error()}}
	}
	out := make([]denar.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		if f.Path == "" {
			f.Path = prefix
		} else {
			f.Path = prefix + "." + f.Path
		}
		out[i] = f
	}
	return out
}

// appendBatchFast decodes and computes a well-formed batch in one pass; ok
// is false (and b is left as it was) at the first problem of any kind.
func appendBatchFast(b []byte, body []byte, now time.Time, explain bool) ([]byte, bool) {
	start := len(b)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	expect := func(want json.Delim) bool {
		t, err := dec.Token()
		return err == nil && t == want
	}
	if !expect('{') {
		return b, false
	}
	if t, err := dec.Token(); err != nil || t != "inputs" || !expect('[') {
		return b, false
	}
	b = append(b, `{"data":[`...)
	var in Input
	n := 0
	for dec.More() {
		if n == MaxBatch {
			return b[:start], false
		}
		in = Input{}
		if dec.Decode(&in) != nil {
			return b[:start], false
		}
		if n > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = AppendCalculation(b, &in, now, explain); err != nil {
			return b[:start], false
		}
		n++
	}
	if n == 0 || !expect(']') || !expect('}') {
		return b[:start], false
	}
	if _, err := dec.Token(); err != io.EOF {
		return b[:start], false
	}
	return append(b, "]}"...), true
}

// AppendCalculationJSON decodes one CalculationInput strictly, calculates
// it and appends the result's JSON object to b. When the body decodes only
// with unknown fields ignored, the calculation's own checks still run, so
// one answer lists every problem of the input.
func AppendCalculationJSON(b []byte, body []byte, now time.Time, explain bool) ([]byte, error) {
	var in Input
	err := jsontext.DecodeJSON(body, &in)
	if err == nil {
		return AppendCalculation(b, &in, now, explain)
	}
	if lenient, lerr := decodeLenient(body); lerr == nil {
		_, cerr := Calculate(lenient, now)
		err = merge(err, cerr)
	}
	return b, err
}

// decodeLenient decodes an input with unknown fields ignored, for the
// calculation's checks to run on an input that failed strict decoding.
func decodeLenient(data []byte) (*Input, error) {
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// merge joins the field errors of two validation errors (b may be nil or
// not a validation error, then a alone is kept); a path reported by a is
// not repeated from b.
func merge(a, b error) error {
	var ea, eb *denar.Error
	if !errors.As(a, &ea) || b == nil || !errors.As(b, &eb) || eb.Code != denar.ECodeValidation {
		return a
	}
	seen := map[string]bool{}
	fields := append([]denar.FieldError(nil), ea.Fields...)
	for _, f := range ea.Fields {
		seen[f.Path] = true
	}
	for _, f := range eb.Fields {
		if !seen[f.Path] {
			fields = append(fields, f)
		}
	}
	return denar.Invalid(fields...)
}

// DecodeConvert reads the body of POST /v1/calculations/convert strictly.
func DecodeConvert(data []byte) (*ConvertInput, error) {
	var in ConvertInput
	if err := jsontext.DecodeJSON(data, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// DecodeInput reads one CalculationInput strictly: unknown fields, wrong
// JSON types, trailing data and numbers given as strings (hours, rates) are
// validation errors with the field's path, so no field is ever accepted and
// ignored.
func DecodeInput(data []byte) (*Input, error) {
	var in Input
	if err := jsontext.DecodeJSON(data, &in); err != nil {
		return nil, err
	}
	return &in, nil
}
