// Package codelists is the code-list room of the e-invoicing application:
// UJP's code lists as validation uses them, per environment. A periodic
// job of each environment reads UJP's lists as the operator and records
// them (ujp_codelists) when they change, telling every company of the
// environment in a codelists.changed event in the same transaction; every
// process validates with the recorded lists (Lists), or the embedded
// snapshot until one is recorded, and serves them (GET /v1/codebooks). It
// stands below internal/einvoicing: the core reads the lists through its
// CodeLists port, which this room's Service satisfies, and this room
// imports neither the core nor any room above it; its events go through
// its own Publisher port (the webhooks room's Service).
package codelists
