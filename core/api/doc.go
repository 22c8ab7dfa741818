// Package api is the contract between gopi's wire dialects and its session
// runtime: every command of pi's RPC protocol as a typed request and
// result with pi's exact JSON names, the events a client receives, the
// extension UI sub-protocol, and [Dispatch], which decodes a command's
// parameters and calls the matching [Server] method.
//
// The native JSONL dialect (package rpc) and the JSON-RPC 2.0 dialect
// (package lspbridge) both sit on [Dispatch]; core/host implements [Server].
package api
