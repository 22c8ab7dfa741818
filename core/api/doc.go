// Package api is the contract between gopi's wire dialects and its session
// runtime: every command of pi's RPC protocol as a typed request and
// result with pi's exact JSON names, the events a client receives, the
// extension UI sub-protocol, and the [Scheduler], which runs a
// connection's commands against a [Server] in the order clients rely on.
//
// The native JSONL dialect (package rpc) and the JSON-RPC 2.0 dialect
// (package lspbridge) both hand their commands to a [Scheduler]; they
// frame messages and map errors, nothing more. core/host implements
// [Server].
package api
