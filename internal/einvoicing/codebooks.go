package einvoicing

import (
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
)

// Where a set of code lists comes from.
const (
	CodebookSourceUJP      = "ujp"      // UJP's lists, read at FetchedAt
	CodebookSourceSnapshot = "snapshot" // the embedded copy (docs/codebooks.md)
)

// CodebookList is GET /v1/codebooks: every code list a caller meets.
type CodebookList struct {
	Object      string                  `json:"object" enum:"list" doc:"Always list."`
	Environment string                  `json:"environment" enum:"sandbox,production" example:"sandbox" doc:"The credential's environment, whose lists these are."`
	Source      string                  `json:"source" enum:"ujp,snapshot" example:"ujp" doc:"ujp: the lists UJP served at fetchedAt (refreshed every six hours; a list UJP served empty keeps its earlier values); snapshot: the copy the service ships (docs/codebooks.md), used until UJP's lists are first read."`
	FetchedAt   *time.Time              `json:"fetchedAt" example:"2026-05-04T06:00:00Z" doc:"When the lists were read from UJP; null for the snapshot."`
	Data        []einvoice.CodebookInfo `json:"data" doc:"The lists, each with the request fields that take its codes."`
}

// Codebook is GET /v1/codebooks/{name}: one code list and its values.
type Codebook struct {
	Object string `json:"object" enum:"codebook" doc:"Always codebook."`
	einvoice.CodebookInfo
	Environment string                   `json:"environment" enum:"sandbox,production" example:"sandbox" doc:"The credential's environment, whose list this is."`
	Source      string                   `json:"source" enum:"ujp,snapshot" example:"ujp" doc:"ujp: the list UJP served at fetchedAt; snapshot: the copy the service ships (docs/codebooks.md)."`
	FetchedAt   *time.Time               `json:"fetchedAt" example:"2026-05-04T06:00:00Z" doc:"When the list was read from UJP; null for the snapshot."`
	Values      []einvoice.CodebookValue `json:"values" doc:"Every value the service accepts, in UJP's order."`
}

// codebookSource says where the lists of cb come from: a set read from
// UJP carries the time it was read; the snapshot carries none.
func codebookSource(cb *ujpdoc.Codebooks) (string, *time.Time) {
	if cb.FetchedAt.IsZero() {
		return CodebookSourceSnapshot, nil
	}
	t := cb.FetchedAt.UTC()
	return CodebookSourceUJP, &t
}

// Codebooks lists the code lists validation uses in the credential's
// environment.
func (s *Service) Codebooks(p *auth.Principal) CodebookList {
	cb := s.codebooks(p.Environment)
	src, at := codebookSource(cb)
	return CodebookList{Object: "list", Environment: p.Environment, Source: src, FetchedAt: at, Data: einvoice.Codebooks(cb)}
}

// Codebook returns one code list of the credential's environment, as
// validation uses it; not_found for a name that is no list.
func (s *Service) Codebook(p *auth.Principal, name string) (Codebook, error) {
	cb := s.codebooks(p.Environment)
	info, values, ok := einvoice.Codebook(cb, name)
	if !ok {
		return Codebook{}, denar.Errorf(denar.ECodeNotFound, "No codebook %q; the lists are %s (GET /v1/codebooks).",
			name, strings.Join(einvoice.CodebookNames(), ", "))
	}
	src, at := codebookSource(cb)
	return Codebook{Object: "codebook", CodebookInfo: info, Environment: p.Environment, Source: src, FetchedAt: at, Values: values}, nil
}
