// Package lspbridge serves gopi's JSON-RPC 2.0 dialect: pi's commands as
// "pi/<command>" requests, its events as "pi/event" notifications, and its
// extension dialogs as the editor's own (window/showMessageRequest,
// window/showMessage, work-done progress), so an editor can drive gopi with
// the JSON-RPC client it already has for language servers. Its pi/
// requests run through an [api.Scheduler], in the native dialect's order;
// the bridge tells it when jsonrpc2 has written each response.
//
// It runs on go.lsp.dev/jsonrpc2 over gopi's own framers from package rpc
// (Content-Length or newline framing, chosen by [rpc.Detect]). Create a
// [Bridge] with [New] and call [Bridge.Serve]; docs/jsonrpc.md describes
// the wire.
package lspbridge
