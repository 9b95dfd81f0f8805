package payroll

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/denar-mk/denar"
)

// MaxBatch is the most inputs one batch calculation takes.
const MaxBatch = 500

// ConvertInput is the body of POST /v1/calculations/convert: a base salary
// (no special hours, no seniority, no bonus) given as gross or as net.
type ConvertInput struct {
	Gross         *string                    `json:"gross,omitempty" doc:"Base gross to convert to net. Give exactly one of gross and net."`
	Net           *string                    `json:"net,omitempty" doc:"Agreed net to convert to the smallest whole-denar gross that pays it."`
	Contractor    bool                       `json:"contractor,omitempty" doc:"R4/R11: flat 10% PIT, no contributions (net = gross × 0.9)."`
	RateOverrides map[string]json.RawMessage `json:"rateOverrides,omitempty" doc:"Rate keys to override, as in CalculationInput."`
	EffectiveDate *string                    `json:"effectiveDate,omitempty" doc:"YYYY-MM-DD; default today in Europe/Skopje."`
}

// ConvertResult is the answer of the convert endpoint: both figures in
// whole denars and the date whose rates were used.
type ConvertResult struct {
	Gross         string `json:"gross"`
	Net           string `json:"net"`
	Contractor    bool   `json:"contractor"`
	EffectiveDate string `json:"effectiveDate"`
}

// Convert converts a base salary between gross and net. Given net, gross
// is the smallest whole-denar gross whose net reaches it and net is that
// gross's net (equal to the given net whenever some gross pays it exactly).
func Convert(in *ConvertInput, now time.Time) (*ConvertResult, error) {
	var fe denar.FieldErrors
	if (in.Gross == nil) == (in.Net == nil) {
		fe.Add("gross", "give exactly one of gross and net")
		return nil, fe.Err()
	}
	calc := Input{GrossSalary: in.Gross, TargetNet: in.Net, Contractor: in.Contractor,
		RateOverrides: in.RateOverrides, EffectiveDate: in.EffectiveDate}
	r, err := Calculate(&calc, now)
	if err != nil {
		var e *denar.Error
		if errors.As(err, &e) {
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
	date, _ := EffectiveDate(&calc, now)
	return &ConvertResult{Gross: r.SalaryGross, Net: r.SalaryNet, Contractor: in.Contractor,
		EffectiveDate: date.Format(time.DateOnly)}, nil
}

// CalculateBatch calculates 1 to MaxBatch inputs. It returns one result
// per input in input order, or, when any input is invalid, one
// validation_failed error listing every problem of every input under
// "inputs[i].".
func CalculateBatch(inputs []Input, now time.Time) ([]*Result, error) {
	if len(inputs) == 0 || len(inputs) > MaxBatch {
		return nil, denar.Invalid(denar.FieldError{Path: "inputs", Message: fmt.Sprintf("give 1 to %d inputs (got %d)", MaxBatch, len(inputs))})
	}
	results := make([]*Result, len(inputs))
	var fields []denar.FieldError
	for i := range inputs {
		r, err := Calculate(&inputs[i], now)
		if err != nil {
			fields = append(fields, Prefixed(fmt.Sprintf("inputs[%d]", i), err)...)
			continue
		}
		results[i] = r
	}
	if len(fields) > 0 {
		return nil, denar.Invalid(fields...)
	}
	return results, nil
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
		f.Path = prefix + "." + f.Path
		out[i] = f
	}
	return out
}

// DecodeInput reads one CalculationInput strictly: unknown fields, wrong
// JSON types, trailing data and numbers given as strings (hours, rates) are
// validation errors with the field's path, so no field is ever accepted and
// ignored. The HTTP layer may decode by its own means; this is for callers
// without one (tests, the fuzz target, batch files).
func DecodeInput(data []byte) (*Input, error) {
	var in Input
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, decodeError(err)
	}
	if dec.More() {
		return nil, denar.Invalid(denar.FieldError{Path: "", Message: "trailing data after the JSON object"})
	}
	return &in, nil
}

// decodeError turns an encoding/json error into a field error.
func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return denar.Invalid(denar.FieldError{Path: typeErr.Field, Message: "must be a JSON " + typeErr.Type.String() + ", not " + typeErr.Value})
	case errors.As(err, &syntaxErr):
		return denar.Invalid(denar.FieldError{Path: "", Message: fmt.Sprintf("malformed JSON at byte %d", syntaxErr.Offset)})
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return denar.Invalid(denar.FieldError{Path: strings.Trim(name, `"`), Message: "unknown field"})
	}
	// Errors from our own UnmarshalJSON (Number) carry no path in
	// encoding/json v1; report them at the top.
	return denar.Invalid(denar.FieldError{Path: "", Message: strings.TrimPrefix(msg, "json: ")})
}
