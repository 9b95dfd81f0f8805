package codelists

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
	Object      string            `json:"object" enum:"list" doc:"Always list."`
	Environment string            `json:"environment" enum:"sandbox,production" example:"sandbox" doc:"The credential's environment, whose lists these are."`
	Source      string            `json:"source" enum:"ujp,snapshot" example:"ujp" doc:"ujp: UJP's lists, read by the service every six hours (fetchedAt is the last read); snapshot: the copy the service ships (docs/codebooks.md), used until UJP's lists are first read."`
	FetchedAt   *time.Time        `json:"fetchedAt" example:"2026-05-04T06:00:00Z" doc:"When UJP's lists were last read; null for the snapshot."`
	Data        []CodebookSummary `json:"data" doc:"The lists, each with the request fields that take its codes, whether it is UJP's and since when it is unchanged."`
}

// CodebookSummary is one list of GET /v1/codebooks.
type CodebookSummary struct {
	einvoice.CodebookInfo
	CodebookFreshness
}

// CodebookFreshness says where a list's values come from and since when
// they are as they are.
type CodebookFreshness struct {
	Live           bool       `json:"live" example:"true" doc:"true: the values are UJP's (read at fetchedAt, or earlier when UJP served this list empty since); false: the snapshot's."`
	UnchangedSince *time.Time `json:"unchangedSince" example:"2026-05-04T06:00:00Z" doc:"Since when UJP's list is as it is now: when the service first read it, or when it last saw it change (the event codelists.changed). Null for the snapshot."`
}

// Codebook is GET /v1/codebooks/{name}: one code list and its values.
type Codebook struct {
	Object string `json:"object" enum:"codebook" doc:"Always codebook."`
	einvoice.CodebookInfo
	Environment string     `json:"environment" enum:"sandbox,production" example:"sandbox" doc:"The credential's environment, whose list this is."`
	Source      string     `json:"source" enum:"ujp,snapshot" example:"ujp" doc:"ujp: UJP's lists, last read at fetchedAt; snapshot: the copy the service ships (docs/codebooks.md)."`
	FetchedAt   *time.Time `json:"fetchedAt" example:"2026-05-04T06:00:00Z" doc:"When UJP's lists were last read; null for the snapshot."`
	CodebookFreshness
	Values []einvoice.CodebookValue `json:"values" doc:"Every value the service accepts, in UJP's order."`
}

// codebookSource says where the lists of env come from: recorded from UJP
// (with the last read), or the snapshot.
func (s *Service) codebookSource(env string) (*ujpdoc.Codebooks, string, *time.Time, recordedState) {
	cb, st := s.recordedLists(env)
	if cb == nil {
		return s.snapshot(), CodebookSourceSnapshot, nil, st
	}
	t := st.FetchedAt.UTC()
	return cb, CodebookSourceUJP, &t, st
}

// freshness is list name's: whether it is UJP's, and since when it is
// unchanged (a tax indicator also changes with the document types allowed
// to use it).
func freshness(st recordedState, name string) CodebookFreshness {
	ls, ok := st.Lists[name]
	if !ok || !ls.Live {
		return CodebookFreshness{}
	}
	since := ls.Since
	if name == ujpdoc.CBTaxIndicators {
		if p, ok := st.Lists[ujpdoc.CBDocTypeTaxIndicators]; ok && p.Since.After(since) {
			since = p.Since
		}
	}
	since = since.UTC()
	return CodebookFreshness{Live: true, UnchangedSince: &since}
}

// Codebooks lists the code lists validation uses in the credential's
// environment.
func (s *Service) Codebooks(p *auth.Principal) CodebookList {
	cb, src, at, st := s.codebookSource(p.Environment)
	out := CodebookList{Object: "list", Environment: p.Environment, Source: src, FetchedAt: at}
	for _, info := range einvoice.Codebooks(cb) {
		out.Data = append(out.Data, CodebookSummary{CodebookInfo: info, CodebookFreshness: freshness(st, info.Name)})
	}
	return out
}

// Codebook returns one code list of the credential's environment, as
// validation uses it; not_found for a name that is no list.
func (s *Service) Codebook(p *auth.Principal, name string) (Codebook, error) {
	cb, src, at, st := s.codebookSource(p.Environment)
	info, values, ok := einvoice.Codebook(cb, name)
	if !ok {
		return Codebook{}, denar.Errorf(denar.ECodeNotFound, "No codebook %q; the lists are %s (GET /v1/codebooks).",
			name, strings.Join(einvoice.CodebookNames(), ", "))
	}
	return Codebook{Object: "codebook", CodebookInfo: info, Environment: p.Environment, Source: src, FetchedAt: at,
		CodebookFreshness: freshness(st, name), Values: values}, nil
}
